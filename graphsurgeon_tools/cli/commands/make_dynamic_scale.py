"""`onnxtool inspect MODEL`: placeholder until the core issue lands."""
