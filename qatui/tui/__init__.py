"""The Textual workbench: `qatui.tui.app.QatuiApp`, its screens and widgets."""
