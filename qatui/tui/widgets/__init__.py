"""qatui's widgets: one panel per module, each carrying its own CSS."""
