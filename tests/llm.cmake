# tests of the llm module(s)
