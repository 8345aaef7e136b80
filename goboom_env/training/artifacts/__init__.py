"""What a training run leaves behind, shared by every trainer: ``model_files`` (writing model files and exports),
``run_folder`` (the run folder, its CSV logs, checkpoints read as tensors only) and ``learning_curve``. Importing
these modules imports no training library.
"""
