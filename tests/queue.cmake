# tests of the queue module(s)
