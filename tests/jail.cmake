# tests of the jail module(s)
