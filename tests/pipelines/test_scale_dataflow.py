"""Each job's Dataflow submission, validated offline: graph, options and job description.

What `python -m pipelines.<job> --runner DataflowRunner ...` would send, built without a network and
without credentials: Beam's `--dry_run True` runs everything DataflowRunner does before it talks to
Google (option validation, Dataflow's transform overrides, Runner v2 set-up, the portable pipeline
proto with the worker image, `validate_pipeline_graph`) and stops there. Beam's own
`--dataflow_job_file` cannot be used offline: it is written only on the way to submitting, after the
pipeline proto is uploaded to `gs://` staging. So the job description (`Environment` with worker
pool, image, experiments, every pipeline option) is then rendered with the same class that
DataflowApplicationClient uses before it submits, and written to a JSON file, minus the uploads.

Needs the gcp extra (`pip install -e ".[gcp]"`); without it the module is skipped.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

pytest.importorskip("google.cloud.dataflow_v1beta3", reason="needs the gcp extra: pip install -e '.[gcp]'")

from apache_beam.options.pipeline_options import GoogleCloudOptions, PipelineOptions, PortableOptions  # noqa: E402
from apache_beam.portability.api import beam_runner_api_pb2  # noqa: E402
from apache_beam.runners.dataflow.dataflow_runner import DataflowRunner  # noqa: E402
from apache_beam.runners.dataflow.internal import apiclient  # noqa: E402
from apache_beam.runners.internal import names  # noqa: E402
from apache_beam.io.filesystems import FileSystems  # noqa: E402

from corpora import bitext as parallel  # noqa: E402
from pipelines import clism_pairs, common, vocap, wiki_mrc  # noqa: E402
from pipelines.wiki_dump_reading import DumpSpec  # noqa: E402

IMAGE = "europe-west4-docker.pkg.dev/xlu-project/xlu/beam-worker:0.1.0"
BUCKET = "gs://xlu-bucket"
# The options docs/scale_out.md gives for every job.
DATAFLOW_ARGS = [
    "--runner", "DataflowRunner", "--project", "xlu-project", "--region", "europe-west4",
    "--temp_location", f"{BUCKET}/tmp", "--sdk_container_image", IMAGE, "--experiments=use_runner_v2",
    "--machine_type", "n2-standard-4", "--max_num_workers", "50",
]
DUMPS = f"{BUCKET}/dumps"


def describe_dataflow_job(job_module, options_cls, argv: list[str], inputs, job_file: Path):
    """The job's graph under DataflowRunner, stopped before submission; the description written to `job_file`.

    Uses the job's own pieces as `common.run_job` does (options, `make_pipeline`, `build`); only
    `plan` is left out, because it checks that the gs:// inputs exist, which needs GCS.
    """
    options = PipelineOptions([*argv, "--dry_run", "True"])
    opts = common.job_options(options, options_cls, job_module.JOB)
    p = common.make_pipeline(options)
    assert isinstance(p.runner, DataflowRunner), "make_pipeline must pass --runner DataflowRunner through"
    job_module.build(p, opts, inputs)
    job = p.run().job  # dry run: the Job as DataflowRunner would submit it, nothing sent

    # DataflowApplicationClient.create_job_description, without _stage_resources' uploads: the
    # artifacts keep their local paths, and are listed under the names they would be staged as.
    staged = []
    for env in job.proto_pipeline.components.environments.values():
        for dep in env.dependencies:
            assert dep.role_urn == "beam:artifact:role:staging_to:v1"
            staged.append(beam_runner_api_pb2.ArtifactStagingToRolePayload.FromString(dep.role_payload).staged_name)
    staging = job.options.view_as(GoogleCloudOptions).staging_location
    serialized = job.proto_pipeline.SerializeToString()
    job.proto.environment = apiclient.Environment(
        packages=sorted(staged),
        options=job.options,
        environment_version=apiclient._FNAPI_ENVIRONMENT_MAJOR_VERSION,
        proto_pipeline_staged_url=FileSystems.join(staging, names.STAGED_PIPELINE_FILENAME),
        proto_pipeline=job.proto_pipeline,
        pipeline_proto_hash=hashlib.sha256(serialized).hexdigest(),
    ).proto
    job_file.write_text(job.json())
    return json.loads(job_file.read_text()), job


def transform_names(job) -> set[str]:
    return {t.unique_name for t in job.proto_pipeline.components.transforms.values()}


def check_runs_on_worker_image(description: dict, job) -> None:
    """Every step runs in the worker image (docker/), Runner v2, and nothing is installed at start-up."""
    assert description["type"] == "JOB_TYPE_BATCH"
    env = description["environment"]
    assert "use_runner_v2" in env["experiments"] and "beam_fn_api" in env["experiments"]
    (pool,) = env["workerPools"]
    assert pool["workerHarnessContainerImage"] == IMAGE
    assert {c["containerImage"] for c in pool["sdkHarnessContainerImages"]} == {IMAGE}
    assert pool["machineType"] == "n2-standard-4" and pool["autoscalingSettings"]["maxNumWorkers"] == 50
    assert env["tempStoragePrefix"].startswith("storage.googleapis.com/xlu-bucket/tmp/")
    # Only Beam's own bookkeeping files are staged: no sdist, no requirements file, so a worker
    # starts from the image and downloads nothing.
    assert {p["name"] for p in pool.get("packages", [])} <= {"pickled_main_session", "submission_environment_dependencies.txt"}
    for env_id, proto_env in job.proto_pipeline.components.environments.items():
        payload = beam_runner_api_pb2.DockerPayload.FromString(proto_env.payload)
        assert proto_env.urn == "beam:env:docker:v1" and payload.container_image == IMAGE, env_id
    used = {t.environment_id for t in job.proto_pipeline.components.transforms.values() if t.environment_id}
    assert used == set(job.proto_pipeline.components.environments)


def test_wiki_mrc_dataflow_job_description(tmp_path):
    specs = [
        DumpSpec("en", f"{DUMPS}/enwiki-20220801-pages-articles-multistream.xml.bz2",
                 f"{DUMPS}/enwiki-20220801-pages-articles-multistream-index.txt.bz2"),
        DumpSpec("sw", f"{DUMPS}/swwiki-20220801-pages-articles.xml.bz2", None),
    ]
    argv = [*DATAFLOW_ARGS, "--job_name", "wiki-mrc-24", "--output", f"{BUCKET}/mrc",
            "--num_shards", "64", "--test_entities", "1000", "--query_words", "50"]
    description, job = describe_dataflow_job(wiki_mrc, wiki_mrc.WikiMrcOptions, argv, specs, tmp_path / "wiki_mrc.json")
    check_runs_on_worker_image(description, job)
    assert description["name"] == "wiki-mrc-24"
    options = description["environment"]["sdkPipelineOptions"]["options"]
    # The job's own flags travel to the workers with Beam's: a worker rebuilding options sees them.
    assert options["project"] == "xlu-project" and options["region"] == "europe-west4"
    assert options["output"] == f"{BUCKET}/mrc" and options["num_shards"] == 64 and options["test_entities"] == "1000"  # N or a fraction
    assert options["sdk_container_image"] == IMAGE
    names_ = transform_names(job)
    # Every stage of the job is in the graph Dataflow receives (test split included), and the
    # shuffle before the readers, which spreads byte ranges over workers, survived the overrides.
    for stage in ("ReadDumps/PlanByteRanges", "ReadDumps/SpreadRanges", "ReadDumps/ReadPages",
                  "BuildMrcExamples/ParsePages", "BuildMrcExamples/ResolveRedirects",
                  "BuildMrcExamples/SelectMentions", "BuildMrcExamples/BuildQueriesAndContexts",
                  "BuildMrcExamples/PairUnanswerable", "SplitTrainTest", "WriteTrain/WriteShard",
                  "WriteTest/WriteShard", "WriteStats/WriteStatsFile",
                  "WriteDeadLetters/WriteParquetShards/WriteShard"):
        assert stage in names_, stage
    create = [t for t in job.proto_pipeline.components.transforms.values() if t.unique_name == "ReadDumps/Dumps"]
    assert create, "the dump list is part of the graph"


def test_clism_pairs_dataflow_job_description(tmp_path):
    sources = [
        parallel.parse_pair_spec(f"fr={BUCKET}/parallel/train.en,{BUCKET}/parallel/train.fr"),
        parallel.parse_pair_spec(f"ar={BUCKET}/parallel/en-ar.tsv"),
        parallel.parse_pair_spec(f"ro-en={BUCKET}/parallel/roen.txt"),
    ]
    argv = [*DATAFLOW_ARGS, "--output", f"{BUCKET}/clism", "--align_shards", "8", "--aligner", "fast_align"]
    description, job = describe_dataflow_job(
        clism_pairs, clism_pairs.ClismPairsOptions, argv, sources, tmp_path / "clism_pairs.json")
    check_runs_on_worker_image(description, job)
    options = description["environment"]["sdkPipelineOptions"]["options"]
    assert options["align_shards"] == 8 and options["spacy_model"] == "en_core_web_sm"
    assert any(n.startswith("BuildClismPairs/") for n in transform_names(job))
    assert "WriteRows/WriteShard" in transform_names(job)


def test_vocap_dataflow_job_description(tmp_path):
    inputs = ([("en", [f"{BUCKET}/mono/en.txt.gz"]), ("sw", [f"{BUCKET}/mono/sw.txt.gz"])], list(range(1000, 50001, 1000)))
    argv = [*DATAFLOW_ARGS, "--output", f"{BUCKET}/vocap", "--vocab_size", "500000"]
    description, job = describe_dataflow_job(vocap, vocap.VocapOptions, argv, inputs, tmp_path / "vocap.json")
    check_runs_on_worker_image(description, job)
    assert {"ReadMono", "AlpCurves", "AllocateAndMerge"} <= {n.split("/")[0] for n in transform_names(job)}


def test_dataflow_options_mistakes_fail_before_submission(monkeypatch):
    """What a user gets wrong most often is refused while the graph is built, offline.

    (A temp_location that is not a valid gs:// path is not tested here: Beam then tries to create a
    default bucket, which needs the network.)
    """
    monkeypatch.delenv("CLOUDSDK_COMPUTE_REGION", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")  # no gcloud to supply a default region
    without_region = [a for a in DATAFLOW_ARGS if a not in ("--region", "europe-west4")]
    with pytest.raises(ValueError, match="region"):
        common.make_pipeline(PipelineOptions([*without_region, "--dry_run", "True"]))
    bad_project = [*DATAFLOW_ARGS[:2], "--project", "My_Project", *DATAFLOW_ARGS[4:]]
    with pytest.raises(ValueError, match="project"):
        common.make_pipeline(PipelineOptions([*bad_project, "--dry_run", "True"]))


def test_setup_file_alternative_stages_the_project_sdist(tmp_path):
    """`--setup_file ./pyproject.toml` (Beam >= 2.5x accepts pyproject.toml; no setup.py shim needed):
    Beam builds the project's sdist with `python -m build --no-isolation` and stages it as
    workflow.tar.gz, which each worker pip-installs at start-up (with its dependencies, from PyPI)."""
    pytest.importorskip("build", reason="--setup_file needs the `build` package (the scale extra)")
    root = Path(__file__).resolve().parents[2]
    argv = [a if a != IMAGE else "apache/beam_python3.11_sdk:2.77.0" for a in DATAFLOW_ARGS]
    argv += ["--setup_file", str(root / "pyproject.toml"), "--output", f"{BUCKET}/vocap"]
    inputs = ([("en", [f"{BUCKET}/mono/en.txt.gz"])], [1000, 2000])
    description, job = describe_dataflow_job(vocap, vocap.VocapOptions, argv, inputs, tmp_path / "vocap.json")
    pool = description["environment"]["workerPools"][0]
    assert "workflow.tar.gz" in {p["name"] for p in pool["packages"]}
    sdists = [beam_runner_api_pb2.ArtifactFilePayload.FromString(d.type_payload).path
              for e in job.proto_pipeline.components.environments.values() for d in e.dependencies
              if d.role_payload.endswith(b"workflow.tar.gz")]
    assert len(sdists) == 1 and Path(sdists[0]).name.startswith("xlu_factory-")


def test_portable_runner_graph_for_flink_and_spark(tmp_path):
    """FlinkRunner and SparkRunner are PortableRunner plus a job server jar (downloaded from Maven,
    so not here): what they submit is the portable pipeline proto with a Docker environment. Build
    that proto for wiki_mrc with the worker image, as `--environment_type DOCKER` does."""
    from apache_beam.runners.portability.fn_api_runner import translations
    from apache_beam.transforms import environments

    argv = ["--runner", "FlinkRunner", "--flink_master", "flink-jobmanager:8081", "--environment_type", "DOCKER",
            "--environment_config", IMAGE, "--output", f"{BUCKET}/mrc"]
    options = PipelineOptions(argv)
    p = common.make_pipeline(options)
    assert type(p.runner).__name__ == "FlinkRunner"
    opts = common.job_options(options, wiki_mrc.WikiMrcOptions, wiki_mrc.JOB)
    wiki_mrc.build(p, opts, [DumpSpec("en", f"{DUMPS}/enwiki-latest-pages-articles.xml.bz2", None)])
    env = environments.DockerEnvironment.from_options(options.view_as(PortableOptions))
    proto = p.to_runner_api(default_environment=env)
    images = {beam_runner_api_pb2.DockerPayload.FromString(e.payload).container_image
              for e in proto.components.environments.values()}
    assert images == {IMAGE}
    # The fusion Beam's own portable runners apply succeeds: every stage is executable in the SDK.
    stages = translations.create_and_optimize_stages(proto, translations.standard_optimize_phases(),
                                                      known_runner_urns=frozenset())[1]
    assert len(stages) > 10
