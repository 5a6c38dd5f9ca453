"""Export a model train.py trained to Hugging Face's GPT-2 layout:

    python -m gpt.export OUT_DIR DIR [--ckpt best] [--force]

writes DIR/config.json and DIR/model.safetensors (GPT.save_pretrained), which
`transformers.GPT2LMHeadModel.from_pretrained(DIR)` loads with the same logits, and which
`train.py --init_from=DIR` / `sample.py --init_from=DIR` read back.
"""
import argparse
import sys
from pathlib import Path

from gpt.pretrained import CONFIG_NAME, WEIGHTS_NAME
from gpt.sampling import load_model
from gpt.checkpoint import TrainError


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m gpt.export", description=__doc__.splitlines()[0])
    p.add_argument("out_dir", help="folder holding the checkpoint train.py wrote")
    p.add_argument("dir", help="folder to write config.json and model.safetensors into")
    p.add_argument("--ckpt", default="latest", choices=["latest", "best"], help="which checkpoint to export")
    p.add_argument("--force", action="store_true", help="replace a model already in DIR")
    args = p.parse_args(argv)
    target = Path(args.dir)
    try:
        if target.exists() and not target.is_dir():
            raise TrainError(f"{target} is a file, not a folder")
        present = [f for f in (WEIGHTS_NAME, CONFIG_NAME) if (target / f).exists()]
        if present and not args.force:
            raise TrainError(f"{target / present[0]} exists: pass --force to replace it")
        model, _ = load_model(args.out_dir, args.ckpt)
        model.save_pretrained(target)
    except (TrainError, ValueError, OSError) as e:
        print(f"gpt.export: error: {e}", file=sys.stderr)
        return 2
    c = model.config
    print(f"wrote {target / CONFIG_NAME} and {target / WEIGHTS_NAME} (n_layer={c.n_layer}, n_head={c.n_head}, "
          f"n_embd={c.n_embd}, vocab_size={c.vocab_size}, block_size={c.block_size})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
