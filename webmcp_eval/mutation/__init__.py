"""Mutation testing of a suite: break the site on purpose, see whether the cases notice."""
