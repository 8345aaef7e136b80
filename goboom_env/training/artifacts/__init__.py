"""What a training run leaves behind, shared by every trainer: model files, the numpy actor, the run folder.

==================  ===========================================================================================
module              what it holds
==================  ===========================================================================================
``model_files``     the one metadata schema and compatibility check of every trained policy; play-only model
                    zips, ``export_policy``, ``average_policies``; the actor of a saved model
``numpy_actor``     ``FrozenMlp``: the actor network in numpy (what ``ppo:`` plays and league snapshots are)
``run_folder``      the run folder of ``goboom train`` and ``train-fast``: its files, its start (staged by the
                    output rule of ``goboom_env.outdir``), CSV logs, checkpoints read as tensors only
``learning_curve``  ``learning_curve.png`` of a run folder
==================  ===========================================================================================

Importing these modules imports no training library (torch only inside the one function that reads a checkpoint).
"""
