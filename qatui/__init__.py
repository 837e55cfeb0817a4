"""qatui: a terminal workbench for judging open-ended question answering with LLMs."""

__version__ = "0.1.0"
