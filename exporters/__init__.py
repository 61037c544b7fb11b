"""onnxtool's PyTorch side: the SRCNN example family, the C++ resize op, and export helpers.

This package imports torch. ``graphsurgeon_tools`` never imports it at module level.
"""
