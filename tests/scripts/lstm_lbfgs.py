"""Sine waves predicted by two LSTMCells, fitted with LBFGS in float64 (torch form). argv: steps."""
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim


class Sequence(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm1 = nn.LSTMCell(1, 16)
        self.lstm2 = nn.LSTMCell(16, 16)
        self.linear = nn.Linear(16, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t = torch.zeros(input.size(0), 16, dtype=torch.double)
        c_t = torch.zeros(input.size(0), 16, dtype=torch.double)
        h_t2 = torch.zeros(input.size(0), 16, dtype=torch.double)
        c_t2 = torch.zeros(input.size(0), 16, dtype=torch.double)
        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for _ in range(future):
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        return torch.cat(outputs, dim=1)


np.random.seed(2)
T, L, N = 20, 30, 8
x = np.empty((N, L), "int64")
x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)
data = np.sin(x / 1.0 / T).astype("float64")

torch.manual_seed(0)
input = torch.from_numpy(data[3:, :-1])
target = torch.from_numpy(data[3:, 1:])
test_input = torch.from_numpy(data[:3, :-1])
test_target = torch.from_numpy(data[:3, 1:])
seq = Sequence()
seq.double()
criterion = nn.MSELoss()
optimizer = optim.LBFGS(seq.parameters(), lr=0.8)
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
for i in range(steps):
    def closure():
        optimizer.zero_grad()
        out = seq(input)
        loss = criterion(out, target)
        loss.backward()
        return loss
    loss = optimizer.step(closure)
    print("STEP:", i, "loss:", loss.item())
    with torch.no_grad():
        future = 10
        pred = seq(test_input, future=future)
        test_loss = criterion(pred[:, :-future], test_target)
        print("test loss:", test_loss.item())
        y = pred.detach().numpy()
print(f"final {test_loss.item():.8f}")
