"""GRPO with a truegrade reward in TRL (needs `pip install trl` and a GPU-sized budget).

The dataset needs a `prompt` column and a gold-answer column (`answer`, `solution`,
`ground_truth` or `reference`); every other column reaches the grader as metadata.
"""

from datasets import load_dataset
from trl import GRPOConfig, GRPOTrainer

from truegrade.integrations.trl import reward_func

dataset = load_dataset("json", data_files="math_prompts.jsonl", split="train")

trainer = GRPOTrainer(
    model="Qwen/Qwen2.5-Math-1.5B-Instruct",
    # None for completions the grader could not grade (TRL ignores them); the pass rate, error
    # rate and every flag's rate are logged as truegrade/<name>/... metrics
    reward_funcs=[reward_func("math")],
    args=GRPOConfig(output_dir="grpo-truegrade", log_completions=True),
    train_dataset=dataset,
)
trainer.train()
