"""Hostile and broken inputs for every onnxtool command, built in code.

``models``  small valid models (the raw material every bad case is made from)
``corpus``  the cases: how to build each one in a tmp folder, the exit code and message expected
``harness`` the commands, running them in-process or as a subprocess, and the checks
"""
