# tests of the core module(s)
