"""Example sites that ship with the package, to try webmcp-eval and its pytest plugin on (``webmcp-eval
serve-example shop``): ``shop/`` is a static tea shop under ``/demo/`` with a second host standing in for a CDN."""
