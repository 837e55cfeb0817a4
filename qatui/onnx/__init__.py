"""Models on ONNX Runtime: a transformers model exported once, checked against torch, and run on a CPU.

Shared by the NLI cross-encoder (`qatui.nli`) and the sentence embedder (`qatui.embed`):
`export` makes and checks the copy in the user's cache, `runtime` runs a padded batch on torch
or on ONNX Runtime, `pick` chooses between them for `[models] nli_runtime` / `embedder_runtime`.
Importing this package imports neither torch, transformers nor onnxruntime: they load with a model.
"""
