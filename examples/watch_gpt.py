"""A plain PyTorch GPT trained on bytes of a text file, watched by DepthLab: the run appears in
the lab's window (`make run`) while it trains. `--lns` scales each block's norm outputs by
1/sqrt(l) (LayerNorm Scaling); `--lns-dropped` declares LNS but forgets the scale (OLMo-core's
PR #698: the run then shows Pre-LN's variance curve). Usage:
    python examples/watch_gpt.py --text README.md --steps 200 [--db lab.db] [--lns]
"""
import argparse, math, torch
from torch import nn
import depthlab

class Block(nn.Module):
    def __init__(self, c, heads, scale):
        super().__init__()
        self.ln_1, self.ln_2, self.scale = nn.LayerNorm(c), nn.LayerNorm(c), scale
        self.attn = nn.MultiheadAttention(c, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(c, 4 * c), nn.GELU(), nn.Linear(4 * c, c))

    def forward(self, x):
        t = x.shape[1]
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool, device=x.device), 1)
        h = self.ln_1(x) * self.scale
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln_2(x) * self.scale)

class GPT(nn.Module):
    def __init__(self, vocab=256, c=64, heads=4, layers=6, context=64, lns=False):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, c), nn.Embedding(context, c)
        self.blocks = nn.ModuleList(
            Block(c, heads, 1 / math.sqrt(l + 1) if lns else 1.0) for l in range(layers))
        self.ln_f, self.head = nn.LayerNorm(c), nn.Linear(c, vocab, bias=False)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--text", required=True); p.add_argument("--db", default=None)
    p.add_argument("--steps", type=int, default=200); p.add_argument("--every", type=int, default=20)
    p.add_argument("--prune-every", type=int, default=None); p.add_argument("--name", default="")
    p.add_argument("--lns", action="store_true"); p.add_argument("--lns-dropped", action="store_true")
    p.add_argument("--layers", type=int, default=6); p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    torch.manual_seed(a.seed)
    data = torch.frombuffer(bytearray(open(a.text, "rb").read()), dtype=torch.uint8).long()
    batch = lambda n: torch.stack([data[i:i + 65] for i in torch.randint(len(data) - 65, (n,))])
    model = GPT(layers=a.layers, lns=a.lns)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    probe = depthlab.watch(model, probe_batch=batch(8)[:, :64], name=a.name or None, every=a.every,
                           prune_every=a.prune_every, steps=a.steps, db=a.db, seed=a.seed,
                           scheme="lns" if a.lns or a.lns_dropped else "pre_ln", optimizer=opt)
    for step in range(a.steps):
        xy = batch(16)
        logits = model(xy[:, :-1])
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), xy[:, 1:].flatten())
        opt.zero_grad(); loss.backward(); opt.step()
        probe.log(loss=loss.item(), lr=opt.param_groups[0]["lr"])
        if probe.should_stop: break
    probe.finish("finished" if step + 1 == a.steps else "stopped")
    print(f"run {probe.run_id} in {probe.store_path}")

if __name__ == "__main__":
    main()
