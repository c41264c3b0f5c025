// HearthRules
