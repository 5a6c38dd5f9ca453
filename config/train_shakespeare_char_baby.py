# A small character-level Shakespeare model that trains on a laptop CPU in minutes:
# nanoGPT's "baby GPT" command line for shakespeare_char, written down as a config file.
#   python train.py config/train_shakespeare_char_baby.py

out_dir = 'out-shakespeare-char-baby'
eval_interval = 250
eval_iters = 20

dataset = 'shakespeare_char'
gradient_accumulation_steps = 1
batch_size = 12
block_size = 64  # characters of context

n_layer = 4
n_head = 4
n_embd = 128
dropout = 0.0  # too little training to overfit

learning_rate = 1e-3  # small models tolerate a high rate
max_iters = 2000
lr_decay_iters = 2000  # usually the same as max_iters
min_lr = 1e-4  # learning_rate / 10, as Chinchilla suggests
beta2 = 0.99  # few tokens per step, so let the second moment move faster
warmup_iters = 100

device = 'cpu'
