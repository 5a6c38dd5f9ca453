"""GPT on minigrad: model, tokenizers, datasets and the training configuration.

The modules are imported one by one (``from gpt.data import Dataset``) so that using the data
or config code never pulls in the model and its autograd engine.
"""
