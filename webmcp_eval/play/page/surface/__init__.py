"""The page surface engine: one reading of what a page offers agents, for every front end.

``model.py`` is the surface (frames, tools, refused registrations, timeline events);
``log.py`` the shim's reports, each parsed once into its typed event (which document each frame
shows, its live registrations);
``reader.py`` reads a live page into the model and calls its tools;
``activity.py`` what the page still has under way, and the wait until it is still. The trial's tool host,
``tools``/``init``/``validate --live``, the audit and the pytest ``webmcp`` fixture all read
the page through it, so they cannot disagree about a tool.
"""
