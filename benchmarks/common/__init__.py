"""What several benchmarks share: their command line, the next-edit evaluation's run
(the LSP editor that replays the cases, reports, dumps), the speculative-edit and typing
workloads, starting a model server. The corpora, their split and the cases and criterion
the evaluation runs are training's (`training.corpus`, `training.eval_cases`,
`training.edit_scoring`): the gates are fitted on them too."""
