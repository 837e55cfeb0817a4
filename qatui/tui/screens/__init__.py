"""qatui's screens: home, live run, saved session, and the modals they open."""
