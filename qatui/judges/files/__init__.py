"""Judges written as TOML files (docs/JUDGE_FILES.md): read and checked (`spec`), run (`judge`), found (`find`)."""

from qatui.judges.files.spec import JudgeFile, JudgeFileError, load_judge_file, parse_judge_text

__all__ = ["JudgeFile", "JudgeFileError", "load_judge_file", "parse_judge_text"]
