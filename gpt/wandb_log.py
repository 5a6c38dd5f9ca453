"""Weights & Biases logging for train.py (`--wandb_log=True`), as nanoGPT's: one run named
`wandb_run_name` in project `wandb_project` with the whole config, and at each evaluation
{"iter", "train/loss", "val/loss", "lr", "mfu"} (mfu in percent). Needs the optional `wandb`
package (`pip install 'minigrad[wandb]'`); `WANDB_MODE=offline` logs without a network."""
from gpt.checkpoint import TrainError
from gpt.config import config_to_dict


class WandbLog:
    """Made at setup, so that a missing wandb stops train.py before anything is trained; the run
    itself starts with `start()` (once setup has succeeded) and ends with `finish()`."""

    def __init__(self, cfg):
        try:
            import wandb
        except ImportError:
            raise TrainError("wandb_log=True needs the wandb package, an optional extra of minigrad: "
                             "pip install 'minigrad[wandb]'") from None
        self.wandb, self.cfg, self.run = wandb, cfg, None

    def start(self):
        if self.run is None:
            self.run = self.wandb.init(project=self.cfg.wandb_project, name=self.cfg.wandb_run_name,
                                       config=config_to_dict(self.cfg))

    def log(self, iter_num, losses, lr, mfu):
        self.wandb.log({"iter": iter_num, "train/loss": losses["train"], "val/loss": losses["val"], "lr": lr,
                        "mfu": mfu * 100})

    def finish(self):
        if self.run is not None:
            self.run.finish()
            self.run = None
