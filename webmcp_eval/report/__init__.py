"""Reports: views that render the results (console, summary.json, JUnit, HTML, Markdown) and the reporter protocol."""
