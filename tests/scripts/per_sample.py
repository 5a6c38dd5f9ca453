"""Beginners' tutorial habits, a sample at a time (torch form): a bag-of-words classifier whose vectors
are filled by `vec[i] += 1`, labels as `torch.LongTensor([...])`, NLLLoss and optim.SGD; then a name
classifier RNN written as two Linear layers on cat(input, hidden), one-hot letters set by indexing,
the loss summed as `loss = 0; loss += ...`, hand-written SGD through `.data`. Prints `final <loss>`."""
import random
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
random.seed(0)
epochs = int(sys.argv[1]) if len(sys.argv) > 1 else 30

# ---- bag of words: which of two topics a sentence is about ----
topics = [["ball", "goal", "team", "score", "match", "coach"], ["bread", "oven", "flour", "salt", "bake", "dough"]]
filler = ["the", "a", "and", "of", "with", "was"]
vocab = sorted({w for t in topics for w in t} | set(filler))
word_to_ix = {w: i for i, w in enumerate(vocab)}
data = []
for _ in range(40):
    label = random.randrange(2)
    data.append(([random.choice(topics[label] + filler) for _ in range(6)], label))


def make_bow_vector(sentence):
    vec = torch.zeros(len(word_to_ix))
    for word in sentence:
        vec[word_to_ix[word]] += 1
    return vec.view(1, -1)


class BoWClassifier(nn.Module):
    def __init__(self, num_labels, vocab_size):
        super().__init__()
        self.linear = nn.Linear(vocab_size, num_labels)

    def forward(self, bow_vec):
        return F.log_softmax(self.linear(bow_vec), dim=1)


bow = BoWClassifier(2, len(vocab))
loss_function = nn.NLLLoss()
optimizer = torch.optim.SGD(bow.parameters(), lr=0.1)
for _ in range(epochs):
    for sentence, label in data:
        bow.zero_grad()
        loss = loss_function(bow(make_bow_vector(sentence)), torch.LongTensor([label]))
        loss.backward()
        optimizer.step()
with torch.no_grad():
    correct = sum(int(bow(make_bow_vector(s)).argmax(1).item() == lab) for s, lab in data)
print(f"bag of words: {correct} of {len(data)} right")
assert correct >= 36, correct

# ---- a name's language from its letters, one letter a step ----
letters = "abcdefghijklmnopqrstuvwxyz"
languages = {"vowelish": "aeiouaeiouy", "consonantish": "bcdfghjklmnpqrstvwxz"}
names = [("".join(random.choice(pool) for _ in range(random.randrange(3, 7))), lang)
         for lang, pool in languages.items() for _ in range(12)]
categories = list(languages)


def line_to_tensor(line):
    tensor = torch.zeros(len(line), 1, len(letters))
    for li, letter in enumerate(line):
        tensor[li][0][letters.find(letter)] = 1
    return tensor


class RNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.i2o = nn.Linear(input_size + hidden_size, output_size)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, input, hidden):
        combined = torch.cat((input, hidden), 1)
        hidden = torch.tanh(self.i2h(combined))
        output = self.softmax(self.i2o(combined))
        return output, hidden

    def init_hidden(self):
        return torch.zeros(1, self.hidden_size)


rnn = RNN(len(letters), 32, len(categories))
criterion = nn.NLLLoss()
learning_rate = 0.01
for _ in range(epochs):
    total = 0.0
    for name, lang in random.sample(names, len(names)):
        line, category = line_to_tensor(name), torch.tensor([categories.index(lang)], dtype=torch.long)
        hidden = rnn.init_hidden()
        rnn.zero_grad()
        loss = 0
        for i in range(line.size()[0]):
            output, hidden = rnn(line[i], hidden)
            loss += criterion(output, category) / line.size()[0]  # every step's guess counts
        loss.backward()
        for p in rnn.parameters():
            p.data.add_(p.grad.data, alpha=-learning_rate)
        total += loss.item()
print(f"final {total / len(names):.6f}")
