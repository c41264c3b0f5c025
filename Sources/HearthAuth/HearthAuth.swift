// HearthAuth
