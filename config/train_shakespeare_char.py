# nanoGPT's character-level Shakespeare run: a 6-layer, 384-wide model with 256 characters of
# context. Meant for a GPU (--device=cuda); on a CPU prefer train_shakespeare_char_baby.py.
#   python train.py config/train_shakespeare_char.py --device=cuda

out_dir = 'out-shakespeare-char'
eval_interval = 250  # the model overfits quickly, so look often
eval_iters = 200
log_interval = 10

# save only when val loss improves, since overfitting sets in
always_save_checkpoint = False

dataset = 'shakespeare_char'
gradient_accumulation_steps = 1
batch_size = 64
block_size = 256  # characters of context

n_layer = 6
n_head = 6
n_embd = 384
dropout = 0.2

learning_rate = 1e-3  # small models tolerate a high rate
max_iters = 5000
lr_decay_iters = 5000  # usually the same as max_iters
min_lr = 1e-4  # learning_rate / 10, as Chinchilla suggests
beta2 = 0.99  # few tokens per step, so let the second moment move faster
warmup_iters = 100
