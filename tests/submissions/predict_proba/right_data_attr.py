"""Leaves the graph through .data and copies once with .to('cpu')."""
import torch


def predict_proba(model, x):
    probs = model(x).softmax(1)
    return probs.data.to("cpu").numpy()
