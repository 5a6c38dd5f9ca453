"""Computer-vision scripts of the kinds the tutorials teach (no torchvision: the pieces written by hand),
written once against a `torch`-like module and run twice: on PyTorch, then on minigrad from PyTorch's
initial weights (copied across as numpy arrays). Random draws come from numpy so that both see the same
ones. Losses, gradients, parameters and outputs must agree closely (float64 throughout)."""
import io

import numpy as np
import pytest

import minigrad
from twins import SCRIPT_TOL as TOL, agree, both, grads, numpy_state, start  # noqa: F401


def small_cnn(nn, classes=4):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
            self.conv2 = nn.Conv2d(4, 6, 3)
            self.drop = nn.Dropout2d(0.25)
            self.fc = nn.Linear(6 * 2 * 2, classes)

        def forward(self, x):
            F = nn.functional
            x = F.max_pool2d(F.relu(self.conv1(x)), 2)
            x = F.max_pool2d(F.relu(self.drop(self.conv2(x))), 2)
            return F.log_softmax(self.fc(x.flatten(1)), dim=1)

    return Net()


# ---- adversarial examples: FGSM over an epsilon sweep, then PGD ------------------------------------------
def adversarial(torch, init):
    F = torch.nn.functional
    model = small_cnn(torch.nn)
    init = start(model, init)
    model.eval()
    rng = np.random.default_rng(1)
    data, target = torch.tensor(rng.random((8, 1, 14, 14))), torch.tensor(rng.integers(0, 4, 8))

    def fgsm_attack(image, epsilon, data_grad):
        perturbed = image + epsilon * data_grad.sign()
        return torch.clamp(perturbed, 0, 1)

    accs, examples, grads_seen = [], [], []
    for epsilon in [0, 0.05, 0.1, 0.3]:
        correct = 0
        x = data.clone()
        x.requires_grad = True
        output = model(x)
        init_pred = output.max(1, keepdim=True)[1]
        loss = F.nll_loss(output, target)
        model.zero_grad()
        loss.backward()
        data_grad = x.grad.data
        grads_seen.append(data_grad)
        perturbed = fgsm_attack(x, epsilon, data_grad)
        output = model(perturbed)
        final_pred = output.max(1, keepdim=True)[1]
        correct += final_pred.eq(target.view_as(final_pred)).sum().item()
        accs.append(correct / float(len(target)))
        examples.append((init_pred.squeeze().tolist(), perturbed.squeeze().detach().cpu().numpy()[0]))

    # projected gradient descent: steps of alpha, projected back into the eps-ball and [0, 1]
    eps, alpha = 0.1, 0.02
    x_adv = data.clone().detach() + torch.tensor(rng.uniform(-eps, eps, data.shape))
    x_adv = torch.clamp(x_adv, 0, 1).detach()
    losses = []
    for _ in range(4):
        x_adv.requires_grad_()
        loss = F.nll_loss(model(x_adv), target)
        grad = torch.autograd.grad(loss, [x_adv])[0]
        losses.append(loss.item())
        x_adv = x_adv.detach() + alpha * torch.sign(grad.detach())
        x_adv = torch.min(torch.max(x_adv, data - eps), data + eps).clamp(0.0, 1.0)
    with torch.no_grad():
        adv_acc = (model(x_adv).argmax(dim=1) == target).float().mean().item()
    return dict(init=init, accs=accs, examples=examples, grads=grads_seen, x_adv=x_adv, losses=losses,
                adv_acc=adv_acc, requires=x_adv.requires_grad)


def test_adversarial_fgsm_pgd(torch):
    both(torch, adversarial)


# ---- neural style transfer: loss modules spliced into a Sequential, the image optimized by LBFGS ---------
def style_transfer(torch, init):
    nn, F = torch.nn, torch.nn.functional
    cnn = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(inplace=True), nn.Conv2d(4, 4, 3, padding=1),
                        nn.ReLU(inplace=True), nn.MaxPool2d(2), nn.Conv2d(4, 6, 3, padding=1),
                        nn.ReLU(inplace=True), nn.Conv2d(6, 6, 3, padding=1), nn.ReLU(inplace=True))
    init = start(cnn, init)
    cnn.eval()
    rng = np.random.default_rng(2)
    content_img, style_img = torch.tensor(rng.random((1, 3, 8, 8))), torch.tensor(rng.random((1, 3, 8, 8)))

    def gram_matrix(input):
        a, b, c, d = input.size()
        features = input.view(a * b, c * d)
        G = torch.mm(features, features.t())
        return G.div(a * b * c * d)

    class ContentLoss(nn.Module):
        def __init__(self, target):
            super().__init__()
            self.target = target.detach()

        def forward(self, input):
            self.loss = F.mse_loss(input, self.target)
            return input

    class StyleLoss(nn.Module):
        def __init__(self, target_feature):
            super().__init__()
            self.target = gram_matrix(target_feature).detach()

        def forward(self, input):
            self.loss = F.mse_loss(gram_matrix(input), self.target)
            return input

    class Normalization(nn.Module):
        def __init__(self, mean, std):
            super().__init__()
            self.mean = torch.tensor(mean).view(-1, 1, 1)
            self.std = torch.tensor(std).view(-1, 1, 1)

        def forward(self, img):
            return (img - self.mean) / self.std

    content_layers, style_layers = ["conv_3"], ["conv_1", "conv_2", "conv_3", "conv_4"]
    model = nn.Sequential(Normalization([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]))
    content_losses, style_losses, names = [], [], []
    i = 0
    for layer in cnn.children():
        if isinstance(layer, nn.Conv2d):
            i += 1
            name = f"conv_{i}"
        elif isinstance(layer, nn.ReLU):
            name = f"relu_{i}"
            layer = nn.ReLU(inplace=False)
        elif isinstance(layer, nn.MaxPool2d):
            name = f"pool_{i}"
        else:
            raise RuntimeError(f"Unrecognized layer: {layer.__class__.__name__}")
        model.add_module(name, layer)
        if name in content_layers:
            target = model(content_img).detach()
            content_loss = ContentLoss(target)
            model.add_module(f"content_loss_{i}", content_loss)
            content_losses.append(content_loss)
        if name in style_layers:
            target_feature = model(style_img).detach()
            style_loss = StyleLoss(target_feature)
            model.add_module(f"style_loss_{i}", style_loss)
            style_losses.append(style_loss)
    for i in range(len(model) - 1, -1, -1):
        if isinstance(model[i], (ContentLoss, StyleLoss)):
            break
    model = model[:(i + 1)]
    names = [n for n, _ in model.named_children()]

    input_img = content_img.clone()
    input_img.requires_grad_(True)
    model.eval()
    model.requires_grad_(False)
    optimizer = torch.optim.LBFGS([input_img])
    run, scores = [0], []
    while run[0] <= 12:
        def closure():
            with torch.no_grad():
                input_img.clamp_(0, 1)
            optimizer.zero_grad()
            model(input_img)
            style_score = sum(sl.loss for sl in style_losses) * 1e4
            content_score = sum(cl.loss for cl in content_losses) * 1
            loss = style_score + content_score
            loss.backward()
            run[0] += 1
            scores.append((style_score.item(), content_score.item()))
            return style_score + content_score
        optimizer.step(closure)
    with torch.no_grad():
        input_img.clamp_(0, 1)
    return dict(init=init, names=names, scores=scores, img=input_img, runs=run[0],
                frozen=[p.requires_grad for p in model.parameters()], state=optimizer.state_dict()["state"][0]["n_iter"])


def test_style_transfer_lbfgs(torch):
    both(torch, style_transfer, tol=dict(rtol=1e-7, atol=1e-9))


# ---- spatial transformer network: a localization net regresses theta; affine_grid + grid_sample ----------
def spatial_transformer(torch, init, align_corners):
    nn, F = torch.nn, torch.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 3, 3)
            self.fc = nn.Linear(3 * 5 * 5, 3)
            self.localization = nn.Sequential(nn.Conv2d(1, 4, 5), nn.MaxPool2d(2, stride=2), nn.ReLU(True),
                                              nn.Conv2d(4, 5, 3), nn.ReLU(True))
            self.fc_loc = nn.Sequential(nn.Linear(5 * 2 * 2, 8), nn.ReLU(True), nn.Linear(8, 3 * 2))
            self.fc_loc[2].weight.data.zero_()
            self.fc_loc[2].bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))

        def stn(self, x):
            xs = self.localization(x)
            xs = xs.view(-1, 5 * 2 * 2)
            theta = self.fc_loc(xs)
            theta = theta.view(-1, 2, 3)
            grid = F.affine_grid(theta, x.size(), align_corners=align_corners)
            return F.grid_sample(x, grid, align_corners=align_corners), theta

        def forward(self, x):
            x, theta = self.stn(x)
            x = F.relu(F.max_pool2d(self.conv(x), 2))
            x = F.dropout(x.view(-1, 3 * 5 * 5), training=self.training)
            return F.log_softmax(self.fc(x), dim=1), theta

    model = Net()
    init = start(model, init)
    rng = np.random.default_rng(3)
    x, y = torch.tensor(rng.random((6, 1, 12, 12))), torch.tensor(rng.integers(0, 3, 6))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model.eval()  # (dropout's draws differ between frameworks)
    losses, thetas = [], []
    for _ in range(3):
        optimizer.zero_grad()
        output, theta = model(x)
        loss = F.nll_loss(output, y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        thetas.append(theta.detach())
    with torch.no_grad():
        transformed = model.stn(x)[0].cpu()
        correct = model(x)[0].max(1, keepdim=True)[1].eq(y.view(-1, 1)).sum().item()
    model.train()
    return dict(init=init, losses=losses, thetas=thetas, transformed=transformed, correct=correct,
                params=list(model.parameters()), training=model.fc_loc.training)


@pytest.mark.parametrize("align_corners", [False, True])
def test_spatial_transformer(torch, align_corners):
    both(torch, spatial_transformer, align_corners=align_corners)


# ---- Grad-CAM and saliency maps: forward/backward hooks, Tensor hooks, autograd.grad -------------------
def grad_cam(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                                          nn.MaxPool2d(2), nn.Conv2d(4, 6, 3, padding=1), nn.ReLU())
            self.pool = nn.AdaptiveAvgPool2d((1, 1))
            self.classifier = nn.Linear(6, 5)

        def forward(self, x):
            return self.classifier(torch.flatten(self.pool(self.features(x)), 1))

    model = CNN()
    init = start(model, init)
    model.eval()
    rng = np.random.default_rng(4)
    x = torch.tensor(rng.random((2, 3, 10, 10)))
    with torch.no_grad():
        model.features[1].running_mean.copy_(torch.tensor(rng.standard_normal(4) * 0.1))
        model.features[1].running_var.copy_(torch.tensor(rng.random(4) + 0.5))

    acts, grads_out, tensor_grads = {}, {}, {}

    def forward_hook(module, input, output):
        acts["value"] = output
        output.register_hook(lambda g: tensor_grads.__setitem__("value", g))

    def backward_hook(module, grad_input, grad_output):
        grads_out["value"] = grad_output[0]

    target_layer = model.features[-1]
    h1 = target_layer.register_forward_hook(forward_hook)
    h2 = target_layer.register_full_backward_hook(backward_hook)
    logits = model(x)
    class_idx = logits.argmax(dim=1)
    one_hot = torch.zeros_like(logits).scatter_(1, class_idx.unsqueeze(1), 1.0)
    model.zero_grad()
    logits.backward(gradient=one_hot, retain_graph=True)
    a, g = acts["value"].detach(), grads_out["value"]
    weights = g.mean(dim=(2, 3), keepdim=True)
    cam = F.relu((weights * a).sum(dim=1, keepdim=True))
    cam = F.interpolate(cam, size=x.shape[2:], mode="bilinear", align_corners=False)
    lo = cam.flatten(1).min(dim=1)[0].view(-1, 1, 1, 1)
    hi = cam.flatten(1).max(dim=1)[0].view(-1, 1, 1, 1)
    cam = (cam - lo) / (hi - lo + 1e-8)
    h1.remove()
    h2.remove()

    # the same map from torch.autograd.grad of the class scores with respect to the feature map
    feats = model.features(x)
    scores = model.classifier(torch.flatten(model.pool(feats), 1))
    picked = scores.gather(1, class_idx.view(-1, 1)).sum()
    (dfeats,) = torch.autograd.grad(picked, feats)
    cam2 = torch.relu((dfeats.mean((2, 3))[:, :, None, None] * feats).sum(1)).detach()

    # saliency: |d score / d pixel|, the largest over the colour channels
    xs = x.clone().requires_grad_(True)
    out = model(xs)
    out[0, out[0].argmax()].backward()
    saliency = xs.grad.data.abs().amax(dim=1)
    smooth = []
    for _ in range(3):  # SmoothGrad with numpy's noise
        xn = (x + torch.tensor(rng.normal(0, 0.1, x.shape))).requires_grad_()
        model(xn)[:, 1].sum().backward()
        smooth.append(xn.grad.abs())
    smooth = torch.stack(smooth).mean(0).amax(1)
    return dict(init=init, logits=logits, cls=class_idx.tolist(), cam=cam, same=tensor_grads["value"] - g,
                cam2=cam2, saliency=saliency, smooth=smooth, grads=grads(model))


def test_grad_cam_and_saliency(torch):
    both(torch, grad_cam)


@pytest.mark.parametrize("side", [12, 28])
def test_grid_sample_float64_identity_grid_gradient(torch, side):
    """float64 pixel coordinates round once, as PyTorch's fused multiply-add: from the identity theta each
    point sits on a pixel centre, where bilinear sampling has a kink, and a second rounding took the other
    side of it (the grid's gradient off by the neighbouring pixel's difference)."""
    x = np.random.default_rng(5).random((1, 2, side, side))
    eye = np.array([[[1.0, 0, 0], [0, 1, 0]]])
    out = []
    for t in (torch, minigrad):
        theta = t.tensor(eye, requires_grad=True)
        grid = t.nn.functional.affine_grid(theta, (1, 2, side, side), align_corners=False)
        grid.retain_grad()
        y = t.nn.functional.grid_sample(t.tensor(x), grid, align_corners=False)
        (y * t.tensor(x)).sum().backward()
        out.append((y.detach().numpy(), grid.grad.numpy(), theta.grad.numpy()))
    for ours, theirs in zip(out[1], out[0]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


# ---- hand-written data augmentation, mixup and cutmix in a training step ---------------------------------
def augmentation(torch, init):
    nn, F = torch.nn, torch.nn.functional
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                          nn.Flatten(), nn.Linear(4, 3))
    init = start(model, init)
    rng = np.random.default_rng(6)
    images = torch.tensor(rng.random((4, 3, 10, 10)))
    labels = torch.tensor(rng.integers(0, 3, 4))
    seen = []

    def augment(x):
        if rng.random() < 0.5:
            x = torch.flip(x, dims=[3])
        x = torch.rot90(x, k=int(rng.integers(0, 4)), dims=[2, 3])
        x = torch.roll(x, shifts=(1, -2), dims=(2, 3))
        x = F.pad(x, (2, 2, 2, 2), mode="reflect")
        top, left = (int(v) for v in rng.integers(0, 5, 2))
        x = x[:, :, top:top + 10, left:left + 10]
        brightness = torch.tensor(rng.uniform(0.8, 1.2, (x.size(0), 1, 1, 1)))
        contrast = torch.tensor(rng.uniform(0.8, 1.2, (x.size(0), 1, 1, 1)))
        x = x * brightness
        mean = x.mean(dim=(1, 2, 3), keepdim=True)
        x = (x - mean) * contrast + mean
        gray = (x * torch.tensor([0.299, 0.587, 0.114]).view(1, 3, 1, 1)).sum(1, keepdim=True)
        x = torch.lerp(gray.expand_as(x), x, 0.9)
        return x.clamp(0, 1)

    def mixup(x, y, alpha=0.4):
        lam = float(rng.beta(alpha, alpha))
        index = torch.from_numpy(rng.permutation(x.size(0)))
        return lam * x + (1 - lam) * x[index, :], y, y[index], lam

    def cutmix(x, y, alpha=1.0):
        lam = float(rng.beta(alpha, alpha))
        index = torch.tensor(rng.permutation(x.size(0)))
        H, W = x.size(2), x.size(3)
        cut = np.sqrt(1.0 - lam)
        cw, ch = int(W * cut), int(H * cut)
        cx, cy = int(rng.integers(W)), int(rng.integers(H))
        x1, x2 = np.clip(cx - cw // 2, 0, W), np.clip(cx + cw // 2, 0, W)
        y1, y2 = np.clip(cy - ch // 2, 0, H), np.clip(cy + ch // 2, 0, H)
        x = x.clone()
        x[:, :, y1:y2, x1:x2] = x[index, :, y1:y2, x1:x2]
        lam = 1 - ((x2 - x1) * (y2 - y1) / (W * H))
        return x, y, y[index], float(lam)

    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4, nesterov=True)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    losses = []
    for step in range(4):
        x = augment(images)
        seen.append(x)
        x, ya, yb, lam = (mixup if step % 2 else cutmix)(x, labels)
        out = model(x)
        loss = lam * criterion(out, ya) + (1 - lam) * criterion(out, yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    beta = torch.distributions.Beta(torch.tensor([0.4]), torch.tensor([0.4]))
    probe = torch.tensor([0.1, 0.5, 0.93])
    return dict(init=init, seen=seen, losses=losses, params=list(model.parameters()),
                buffers=list(model.buffers()), log_prob=beta.log_prob(probe), mean=beta.mean,
                sample_shape=tuple(beta.sample((5,)).shape))


def test_augmentation_mixup_cutmix(torch):
    both(torch, augmentation)


# ---- detection utilities: IoU, NMS, anchors, a YOLO-style loss and focal loss ----------------------------
def detection(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(7)

    def box_area(b):
        return (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])

    def box_iou(a, b):
        lt = torch.max(a[:, None, :2], b[:, :2])
        rb = torch.min(a[:, None, 2:], b[:, 2:])
        wh = (rb - lt).clamp(min=0)
        inter = wh[:, :, 0] * wh[:, :, 1]
        return inter / (box_area(a)[:, None] + box_area(b) - inter)

    def nms(boxes, scores, thr):
        order = scores.argsort(descending=True)
        keep = []
        while order.numel() > 0:
            i = order[0]
            keep.append(i.item())
            if order.numel() == 1:
                break
            ious = box_iou(boxes[i].unsqueeze(0), boxes[order[1:]]).squeeze(0)
            order = order[1:][ious <= thr]
        return torch.tensor(keep, dtype=torch.long)

    xy = rng.random((12, 2)) * 8
    boxes = torch.tensor(np.concatenate([xy, xy + 3 + rng.random((12, 2)) * 6], 1))
    scores = torch.tensor(rng.permutation(12) / 12.0)
    iou = box_iou(boxes, boxes)
    keep = nms(boxes, scores, 0.3)
    _, top = scores.topk(3)

    # anchors on a 3x4 feature map of stride 8, three sizes each
    ys, xs = torch.meshgrid(torch.arange(3), torch.arange(4), indexing="ij")
    centers = torch.stack([xs, ys], dim=-1).reshape(-1, 1, 2).to(torch.float64) * 8 + 4
    sizes = torch.tensor([8.0, 16.0, 32.0]).view(1, -1, 1).repeat(1, 1, 2)
    anchors = torch.cat([centers - sizes / 2, centers + sizes / 2], dim=-1).reshape(-1, 4)
    matched_iou, matched = box_iou(anchors, boxes[:3]).max(dim=1)

    # YOLO-style loss on a 4x4 grid of (x, y, w, h, objectness, 3 classes)
    head = nn.Conv2d(2, 8, 1)
    init = start(head, init)
    feats = torch.tensor(rng.standard_normal((2, 2, 4, 4)))
    pred = head(feats).permute(0, 2, 3, 1)
    target = torch.zeros(2, 4, 4, 8, dtype=torch.float64)
    cells = np.stack([[0, 1, 1], rng.integers(0, 4, 3), rng.integers(0, 4, 3)], 1)
    for n, i, j in cells:
        target[n, i, j, :4] = torch.tensor(rng.random(4))
        target[n, i, j, 4] = 1.0
        target[n, i, j, 5 + rng.integers(3)] = 1.0
    obj_mask = target[..., 4] == 1
    noobj_mask = ~obj_mask
    p, t = pred[obj_mask], target[obj_mask]
    box_loss = F.mse_loss(p[:, :2], t[:, :2], reduction="sum")
    box_loss = box_loss + F.mse_loss(torch.sign(p[:, 2:4]) * torch.sqrt(torch.abs(p[:, 2:4]) + 1e-6),
                                     torch.sqrt(t[:, 2:4]), reduction="sum")
    obj_loss = F.mse_loss(torch.sigmoid(p[:, 4]), t[:, 4], reduction="sum")
    noobj_loss = F.mse_loss(torch.sigmoid(pred[noobj_mask][:, 4]), target[noobj_mask][:, 4], reduction="sum")
    cls_loss = F.mse_loss(p[:, 5:], t[:, 5:], reduction="sum")
    yolo = (5 * box_loss + obj_loss + 0.5 * noobj_loss + cls_loss) / pred.size(0)

    # focal loss over the class logits of every cell
    logits, targets = pred[..., 5:], target[..., 5:]
    ce = F.binary_cross_entropy_with_logits(logits, targets, reduction="none")
    prob = torch.sigmoid(logits)
    p_t = prob * targets + (1 - prob) * (1 - targets)
    alpha_t = torch.where(targets == 1, torch.tensor(0.25, dtype=torch.float64), torch.tensor(0.75, dtype=torch.float64))
    focal = (alpha_t * ce * (1 - p_t) ** 2).sum() / obj_mask.sum().clamp(min=1)
    (yolo + focal).backward()
    return dict(init=init, iou=iou, keep=keep, top=top, anchors=anchors, matched=matched,
                matched_iou=matched_iou, n_obj=obj_mask.sum().item(), losses=[box_loss, obj_loss, noobj_loss, cls_loss],
                yolo=yolo, focal=focal, grads=grads(head))


def test_detection_utilities(torch):
    both(torch, detection)


# ---- segmentation: a small encoder-decoder, weighted cross-entropy with ignore_index, dice, IoU ----------
def segmentation(torch, init):
    nn, F = torch.nn, torch.nn.functional
    C = 3

    def block(i, o):
        return nn.Sequential(nn.Conv2d(i, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True))

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc1, self.enc2 = block(1, 4), block(4, 8)
            self.pool = nn.MaxPool2d(2)
            self.up = nn.ConvTranspose2d(8, 4, kernel_size=2, stride=2)
            self.dec = block(8, 4)
            self.drop = nn.Dropout2d(0.5)
            self.head = nn.Conv2d(4, C, 1)

        def forward(self, x):
            e1 = self.enc1(x)
            e2 = self.enc2(self.pool(e1))
            d = self.dec(torch.cat([self.up(e2), e1], dim=1))
            return self.head(self.drop(d))

    model = UNet()
    init = start(model, init)
    rng = np.random.default_rng(8)
    x = torch.tensor(rng.random((2, 1, 8, 8)))
    y = torch.tensor(rng.integers(0, C, (2, 8, 8)))
    y[0, :2, :2] = 255  # unlabelled pixels
    weight = torch.tensor([0.2, 1.0, 2.0], dtype=torch.float64)

    def dice_loss(logits, target, eps=1.0):
        valid = (target != 255).unsqueeze(1)
        probs = logits.softmax(dim=1) * valid
        one_hot = F.one_hot(target.clamp(max=C - 1), num_classes=C).permute(0, 3, 1, 2).to(logits.dtype) * valid
        inter = (probs * one_hot).sum(dim=(2, 3))
        union = probs.sum(dim=(2, 3)) + one_hot.sum(dim=(2, 3))
        return 1 - ((2 * inter + eps) / (union + eps)).mean()

    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=1e-4)
    model.train()
    model.drop.p = 0.0  # (dropout's draws differ between frameworks)
    losses = []
    for _ in range(3):
        logits = model(x)
        ce = F.cross_entropy(logits, y, weight=weight, ignore_index=255)
        loss = ce + dice_loss(logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append((ce.item(), loss.item()))
    model.eval()
    with torch.no_grad():
        logits = model(x)
        pred = logits.argmax(1)
        mask = y != 255
        hist = torch.bincount(C * y[mask] + pred[mask], minlength=C ** 2).reshape(C, C)
        iou = torch.diag(hist) / (hist.sum(0) + hist.sum(1) - torch.diag(hist))
        per_pixel = F.cross_entropy(logits, y, ignore_index=255, reduction="none")
    return dict(init=init, losses=losses, logits=logits, pred=pred, hist=hist, iou=iou,
                miou=torch.nanmean(iou).item(), acc=(pred[mask] == y[mask]).double().mean(),
                per_pixel=per_pixel, params=list(model.parameters()), buffers=list(model.buffers()))


def test_segmentation_unet(torch):
    both(torch, segmentation)


# ---- an autoencoder over a DataLoader, train/eval, the state dict saved and loaded ----------------------
def autoencoder(torch, init):
    nn, F = torch.nn, torch.nn.functional
    DataLoader, TensorDataset = torch.utils.data.DataLoader, torch.utils.data.TensorDataset

    model = nn.Sequential(
        nn.Conv2d(1, 4, 3, stride=2, padding=1), nn.BatchNorm2d(4), nn.LeakyReLU(0.1), nn.Flatten(),
        nn.Linear(4 * 4 * 4, 6), nn.ReLU(), nn.Linear(6, 8 * 2 * 2), nn.Unflatten(1, (8, 2, 2)),
        nn.Upsample(scale_factor=2, mode="nearest"), nn.Conv2d(8, 8, 3, padding=1), nn.PixelShuffle(2),
        nn.Upsample(size=(8, 8), mode="bilinear", align_corners=False), nn.Conv2d(2, 1, 3, padding=1), nn.Sigmoid())
    init = start(model, init)
    rng = np.random.default_rng(9)
    images = torch.tensor(rng.random((10, 1, 8, 8)))
    ds = TensorDataset(images, images)
    g = torch.Generator().manual_seed(0)
    loader = DataLoader(ds, batch_size=4, shuffle=True, generator=g, drop_last=True)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    batches, order = [], []
    for _ in range(2):
        for xb, yb in loader:
            batches.append((tuple(xb.shape), bool((xb == yb).all())))
            order.extend(int((images == xb[i]).all(dim=(1, 2, 3)).nonzero()) for i in range(len(xb)))
    # a fixed order for the training itself: the shuffles' draws differ between frameworks
    model.train()
    losses = []
    for idx in (rng.permutation(10)[:4], rng.permutation(10)[:4]):
        xb = images[torch.tensor(idx)]
        loss = F.binary_cross_entropy(model(xb), xb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        recon = model(images[:3])
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    buf.seek(0)
    state = torch.load(buf)
    copy = nn.Sequential(
        nn.Conv2d(1, 4, 3, stride=2, padding=1), nn.BatchNorm2d(4), nn.LeakyReLU(0.1), nn.Flatten(),
        nn.Linear(4 * 4 * 4, 6), nn.ReLU(), nn.Linear(6, 8 * 2 * 2), nn.Unflatten(1, (8, 2, 2)),
        nn.Upsample(scale_factor=2, mode="nearest"), nn.Conv2d(8, 8, 3, padding=1), nn.PixelShuffle(2),
        nn.Upsample(size=(8, 8), mode="bilinear", align_corners=False), nn.Conv2d(2, 1, 3, padding=1),
        nn.Sigmoid()).double()
    result = copy.load_state_dict(state)
    copy.eval()
    with torch.no_grad():
        again = copy(images[:3])
    drop = nn.Dropout2d(0.5).train()
    dropped = drop(torch.ones(6, 5, 3, 3, dtype=torch.float64))
    per_channel = dropped.flatten(2)
    whole = bool(((per_channel == 0).all(2) | (per_channel == 2).all(2)).all())
    return dict(init=init, batches=batches, covered=sorted(order[:8]) == sorted(set(order[:8])) and len(order) == 16,
                losses=losses, recon=recon, again=again, keys=sorted(state), missing=list(result.missing_keys),
                tracked=state["1.num_batches_tracked"].item(), whole_channels=whole,
                repr=[repr(m) for m in (model[7], model[8], model[10], model[11])])


def test_autoencoder_dataloader_state_dict(torch):
    both(torch, autoencoder)


# ---- bad input met in these scripts: PyTorch's texts ------------------------------------------------------
def _f64(t, *shape):
    return t.zeros(*shape, dtype=t.float64)


@pytest.mark.parametrize("call", [
    lambda t: t.rot90(t.zeros(2, 3), 1, [1, 1]),
    lambda t: t.rot90(t.zeros(2, 3), 1, [0, -2]),
    lambda t: t.rot90(t.zeros(2, 3), 1, [0]),
    lambda t: t.rot90(t.zeros(2), 1, [0, 1]),
    lambda t: t.rot90(t.zeros(2, 3), 1, [0, 2]),
    lambda t: t.rot90(t.zeros(2, 3), 1.5, [0, 1]),
    lambda t: t.flip(t.zeros(2, 3), [1, -1]),
    lambda t: t.flip(t.zeros(2, 3), [0, 1, 1, 0]),
    lambda t: t.flip(t.zeros(2, 3), [0, 0, 5]),
    lambda t: t.nn.functional.pad(t.zeros(1, 1, 3, 3), (3, 3, 3, 3), mode="reflect"),
    lambda t: t.nn.functional.pad(t.zeros(1, 1, 3, 3), (1, 1, 3, 3), mode="reflect"),
    lambda t: t.nn.functional.pad(t.zeros(1, 1, 2, 3, 3), (1, 1, 1, 1, 2, 2), mode="reflect"),
    lambda t: t.nn.functional.interpolate(t.zeros(1, 1, 4, 4), size=(2, 2, 2)),
    lambda t: t.nn.functional.interpolate(t.zeros(1, 1, 4, 4), size=[2]),
    lambda t: t.nn.functional.interpolate(t.zeros(1, 1, 4), size=(2, 2), mode="linear"),
    lambda t: t.nn.functional.interpolate(t.zeros(1, 1, 4, 4), scale_factor=(2.0, 2.0, 2.0)),
    lambda t: t.nn.functional.cross_entropy(_f64(t, 2, 3, 4, 4), t.zeros(2, 4, 4, dtype=t.long),
                                            weight=t.ones(2, dtype=t.float64)),
    lambda t: t.nn.functional.nll_loss(_f64(t, 2, 3, 2), t.zeros(2, 2, dtype=t.long), weight=t.ones(4)),
    lambda t: t.nn.functional.nll_loss(_f64(t, 2, 3), t.zeros(2, dtype=t.long), weight=t.ones(2)),
], ids=["rot90_same_dims", "rot90_same_dims_negative", "rot90_one_dim", "rot90_1d", "rot90_dim_out_of_range",
        "rot90_float_k", "flip_repeated_dim", "flip_first_repeat_named", "flip_repeat_before_range",
        "pad_reflect_last_dim_first", "pad_reflect_second_pair", "pad_reflect_third_pair", "interpolate_size_3_for_2d",
        "interpolate_size_1_for_2d", "interpolate_size_2_for_1d", "interpolate_scale_tuple", "cross_entropy_2d_weight",
        "nll_loss_1d_spatial_weight", "nll_loss_rows_weight"])
def test_errors_as_pytorch(torch, call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(minigrad)
    assert str(ours.value) == str(theirs.value)


def test_rot90_and_flip_still_rotate_as_pytorch(torch):
    x = np.arange(24.0).reshape(2, 3, 4)
    for k in (-3, -1, 0, 1, 2, 5):
        for dims in ([0, 1], [2, 0], [-1, -2], (1, 2)):
            np.testing.assert_array_equal(minigrad.rot90(minigrad.tensor(x), k, dims).numpy(),
                                          torch.rot90(torch.tensor(x), k, dims).numpy())
    for dims in ([0], [-1, 0], (2, 1, 0)):
        np.testing.assert_array_equal(minigrad.flip(minigrad.tensor(x), dims).numpy(),
                                      torch.flip(torch.tensor(x), dims).numpy())


@pytest.mark.parametrize("shape", [(3,), (2, 3), (2, 3, 2), (2, 3, 2, 2), (2, 3, 2, 2, 2)])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
def test_cross_entropy_grad_fn_names_as_pytorch(torch, shape, label_smoothing):
    """A segmentation loss over (N, C, H, W) prints PyTorch's NllLoss2DBackward0; a smoothed one AddBackward0."""
    names = []
    for t in (torch, minigrad):
        x = t.zeros(*shape, dtype=t.float64, requires_grad=True)
        y = t.zeros(shape[:1] + shape[2:], dtype=t.long) if len(shape) > 1 else t.tensor(0)
        names.append([type(t.nn.functional.cross_entropy(x, y, label_smoothing=label_smoothing,
                                                          reduction=r).grad_fn).__name__ for r in ("mean", "none")])
    assert names[1] == names[0]


@pytest.mark.parametrize("shape", [(2, 3, 2), (2, 3, 2, 2), (2, 3, 2, 2, 2)])
def test_nll_loss_grad_fn_names_as_pytorch(torch, shape):
    names = []
    for t in (torch, minigrad):
        x = t.zeros(*shape, dtype=t.float64, requires_grad=True)
        y = t.zeros(shape[:1] + shape[2:], dtype=t.long)
        names.append([type(t.nn.functional.nll_loss(x, y, reduction=r).grad_fn).__name__ for r in ("mean", "none")])
    assert names[1] == names[0]
