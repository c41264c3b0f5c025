// HearthStore
