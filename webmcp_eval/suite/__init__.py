"""The suite: case files, their model and matchers, the suite folder and the site it targets."""
