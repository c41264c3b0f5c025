// HearthTesting
