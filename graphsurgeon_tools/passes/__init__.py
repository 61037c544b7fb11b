"""Graph passes, one module each. Every pass takes a ModelProto and returns a result object."""
