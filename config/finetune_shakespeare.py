# Fine-tune OpenAI's GPT-2 on Tiny Shakespeare (GPT-2 BPE tokens): nanoGPT's finetune_shakespeare
# settings. The weights are read from a local copy (docs/pretrained.md): never downloaded.
#   python train.py config/finetune_shakespeare.py                       # gpt2-xl, 1.5B parameters
#   python train.py config/finetune_shakespeare.py --init_from=gpt2      # 124M, feasible on a CPU
# then: python sample.py --out_dir=out-shakespeare --start="ROMEO:"

out_dir = 'out-shakespeare'
eval_interval = 5
eval_iters = 40
wandb_log = False  # feel free to turn on (the wandb extra: pip install 'minigrad[wandb]')
wandb_project = 'shakespeare'
wandb_run_name = 'ft-shakespeare'  # (nanoGPT appends the time; a config file here holds literals only)

dataset = 'shakespeare'
init_from = 'gpt2-xl'  # the largest GPT-2; or gpt2, gpt2-medium, gpt2-large, or a model folder

# save only when the validation loss improves: fine-tuning overfits soon
always_save_checkpoint = False

# tokens per iteration: 1 sequence * 32 accumulation steps * 1024 tokens = 32,768;
# Tiny Shakespeare's ~300k training tokens are one epoch in about 9 iterations
batch_size = 1
gradient_accumulation_steps = 32
block_size = 1024  # GPT-2's whole context (this project's default is 64)
max_iters = 20

# a constant, small learning rate
learning_rate = 3e-5
decay_lr = False
