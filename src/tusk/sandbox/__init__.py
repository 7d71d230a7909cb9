"""Local stand-ins: the GitHub, the model, act and the signing service tests run against.

- ``act_runner``: Run Tusk's workflows offline under ``act``, the way GitHub would run them.
- ``admin``: The admin API under ``/_sandbox/``.
- ``app_view``: What the local GitHub's parts read of its app and of the GraphQL resolver,
  as protocols.
- ``artifacts``: Artifact archives.
- ``cli``: ``tusk sandbox github`` and ``tusk sandbox model``.
- ``ctlog``: A local certificate-transparency log: the SCT Fulcio embeds in each
  certificate.
- ``faults``: Faults on demand.
- ``fulcio``: Local stand-ins for keyless signing.
- ``fulcio_server``: The keyless-signing stand-ins over HTTP, for the demo and the tests of
  the job's side.
- ``github_access``: Who may do what on the local GitHub beyond its tokens' scopes.
- ``github_app``: The local GitHub's request pipeline, held to GitHub's API descriptions.
- ``github_git``: Git smart HTTP on the local GitHub (``/{owner}/{name}.git``).
- ``github_server``: The local GitHub.
- ``gitstore``: Real bare git repositories behind the local GitHub, one temporary folder per
  server.
- ``graphql_api``: GraphQL at ``/graphql``, executed by graphql-core against GitHub's
  published schema.
- ``graphql_cost``: What a GraphQL call costs on GitHub, computed before it runs.
- ``graphql_discussions``: Discussions in the local GitHub's GraphQL.
- ``graphql_issues``: The local GitHub's GraphQL mutations on whole issues.
- ``graphql_paging``: GraphQL connections over the local GitHub's lists.
- ``graphql_reactions``: Reactions in the local GitHub's GraphQL.
- ``graphql_resolvers``: The local GitHub's GraphQL resolvers.
- ``http_body``: Reading a request body in the stand-ins' stdlib HTTP servers.
- ``merkle``: An RFC 6962 Merkle tree: the root of a list of leaves and a leaf's inclusion
  proof.
- ``model_script``: The scripted model's script.
- ``model_server``: The scripted model.
- ``model_testing``: Pytest plugin.
- ``outcomes``: What the local GitHub answers.
- ``ratelimit``: Primary rate-limit accounting.
- ``recorded``: Recordings of real api.github.com exchanges, and how an answer is held to
  one.
- ``recorded_replay``: The recordings replayed against the local GitHub (the recorded-truth
  tests).
- ``recorded_seeds``: The state each recording implies, as a local GitHub scenario.
- ``rekor``: A local Rekor (v1 API): a transparency log of DSSE entries, as Sigstore's.
- ``repo_ids``: GitHub's second spelling of a repository's URLs.
- ``rest``: The REST plumbing.
- ``rest_actions_setup``: REST handlers of a repository's Actions set-up.
- ``rest_attestations``: REST handlers.
- ``rest_issues``: REST handlers.
- ``rest_notifications``: REST handlers.
- ``rest_pulls``: REST handlers.
- ``rest_repos``: REST handlers.
- ``rest_runs``: REST handlers.
- ``rest_setup``: REST handlers a deployment is set up with.
- ``scenario``: Scenarios.
- ``scenario_build``: A checked scenario's repositories built into the world.
- ``scenario_refs``: A scenario's references checked.
- ``scenario_shapes``: The shape of a scenario document.
- ``scenarios``: The named scenarios and scripted models tests and demos run.
- ``secondary``: GitHub's secondary rate limits, per user, in the local GitHub's own time.
- ``shapes``: GitHub's JSON shapes for the sandbox's records.
- ``shapes_issues``: GitHub's JSON shapes for the sandbox's issues.
- ``shapes_repos``: GitHub's JSON shapes for the sandbox's users, repositories and branches,
  and the node ids every shape carries.
- ``spec``: GitHub's own API descriptions, loaded once per process, and the checks made with
  them.
- ``testing``: pytest plugin and helpers for the local GitHub.
- ``trusted_root``: The stand-ins' trust root in Sigstore's ``trusted_root.json`` format.
- ``tsa``: A local RFC 3161 time-stamping authority: what GitHub's own TSA is to a private
  control repository's attestations.
- ``world``: The local GitHub's state.
- ``world_clock``: The local GitHub's time.
- ``world_records``: The local GitHub's records.
"""
