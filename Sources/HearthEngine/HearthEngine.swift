// HearthEngine
