"""Fit a cubic to noisy samples with a Linear layer over polynomial features (torch form)."""
import math
import sys

import torch
import torch.nn as nn

torch.manual_seed(0)
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 300

x = torch.linspace(-math.pi, math.pi, 200).unsqueeze(1)
y = torch.sin(x) + 0.01 * torch.randn(200, 1)
features = torch.cat([x, x ** 2, x ** 3], dim=1)

model = nn.Sequential(nn.Linear(3, 1), nn.Flatten(0, 1))
loss_fn = nn.MSELoss(reduction="sum")
optimizer = torch.optim.SGD(model.parameters(), lr=1e-5, momentum=0.9)

for t in range(steps):
    pred = model(features)
    loss = loss_fn(pred, y.flatten())
    if t % 100 == 99:
        print(f"step {t:4d} loss {loss:.6f}")
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

layer = model[0]
b, (c1, c2, c3) = layer.bias.item(), layer.weight[0].tolist()
print(f"y = {b:+.4f} {c1:+.4f} x {c2:+.4f} x^2 {c3:+.4f} x^3")
print("final", "{:.8f}".format(loss.item()))
