// See hub_fetch.h.
#include "hf/hub_fetch.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "hf/hf_config.h"
#include "util/python_env.h"
#include "util/remove_tree.h"
#include "util/run_command.h"

namespace depthlab::hf {

namespace fs = std::filesystem;

namespace {

constexpr char kMarker[] = ".depthlab-fetched";

// argv: fetch repo revision dest | forget repo commit. fetch: the revision into Hugging Face's
// own cache (shared with transformers; HF_HOME as it says), linked into dest file by file; its
// commit printed. Exit 0 done; 2 offline or unreachable; 3 no such repository or revision; 4 no
// weights the lab reads (and no torch to convert .bin); 1 anything else. forget: that commit's
// files deleted from the cache (blobs another revision shares are kept).
constexpr char kHubScript[] = R"PY(
import glob, os, sys
from huggingface_hub import snapshot_download, scan_cache_dir
from huggingface_hub import errors as hub_errors
if sys.argv[1] == "forget":
    repo, commit = sys.argv[2:4]
    cache = scan_cache_dir()
    if any(r.repo_id == repo and any(v.commit_hash == commit for v in r.revisions) for r in cache.repos):
        cache.delete_revisions(commit).execute()
    sys.exit(0)
repo, revision, dest = sys.argv[2:5]
def fetch(patterns):
    try:
        return snapshot_download(repo_id=repo, revision=revision, allow_patterns=patterns)
    except (hub_errors.RepositoryNotFoundError, hub_errors.RevisionNotFoundError) as e:
        print(type(e).__name__ + ": " + str(e).splitlines()[0], file=sys.stderr); sys.exit(3)
    except hub_errors.LocalEntryNotFoundError as e:
        print(str(e).splitlines()[0], file=sys.stderr); sys.exit(2)
    except OSError as e:  # connection refused, no route, DNS
        print(type(e).__name__ + ": " + str(e).splitlines()[0], file=sys.stderr); sys.exit(2)
snapshot = fetch(["config.json", "*.safetensors", "model.safetensors.index.json",
                  "tokenizer.json", "tokenizer.model", "tokenizer_config.json",
                  "special_tokens_map.json", "trainer_state.json"])
os.makedirs(dest, exist_ok=True)
def link_all(folder, skip=()):
    for name in os.listdir(folder):
        target = os.path.join(dest, name)
        if name in skip or os.path.lexists(target): continue
        os.symlink(os.path.realpath(os.path.join(folder, name)), target)
if glob.glob(os.path.join(snapshot, "*.safetensors")):
    link_all(snapshot)
else:
    snapshot = fetch(["config.json", "pytorch_model*.bin", "pytorch_model.bin.index.json",
                      "tokenizer*", "special_tokens_map.json"])
    bins = sorted(glob.glob(os.path.join(snapshot, "pytorch_model*.bin")))
    if not bins:
        print("the revision holds neither safetensors nor pytorch_model*.bin weights",
              file=sys.stderr); sys.exit(4)
    try:
        import torch
        from safetensors.torch import save_file
    except ImportError:
        print("the revision has only pytorch_model*.bin weights; converting them needs torch and "
              "safetensors in " + sys.executable, file=sys.stderr); sys.exit(4)
    state = {}
    for b in bins:
        state.update(torch.load(b, map_location="cpu", weights_only=True))
    seen, tensors = set(), {}
    for k, v in state.items():  # tied weights share storage: safetensors keeps one copy
        key = (v.untyped_storage().data_ptr(), v.storage_offset(), tuple(v.shape))
        if key in seen: continue
        seen.add(key); tensors[k] = v.contiguous()
    save_file(tensors, os.path.join(dest, "model.safetensors"), metadata={"format": "pt"})
    link_all(snapshot, skip=[os.path.basename(b) for b in bins] + ["pytorch_model.bin.index.json"])
print(os.path.basename(os.path.normpath(snapshot)))
)PY";

}  // namespace

std::string defaultHubFolder(const std::string& repo, const std::string& revision) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const fs::path cache = xdg && *xdg ? fs::path(xdg) : fs::path(home ? home : "/tmp") / ".cache";
  std::string folder = repo;
  for (size_t at = folder.find('/'); at != std::string::npos; at = folder.find('/', at + 2)) {
    folder.replace(at, 1, "--");
  }
  return (cache / "depthlab" / "hub" / folder / revision).string();
}

void fetchHubRevision(const std::string& repo, const std::string& revision,
                      const std::string& dest) {
  if (fs::exists(fs::path(dest) / kMarker)) return;
  const std::string python = util::pythonWithModule("huggingface_hub");
  if (python.empty()) {
    throw HfModelError(
        "--hub needs Python's huggingface_hub (make build-torch2 makes DepthLab's "
        "environment with it, or set DEPTHLAB_PYTHON to an interpreter that has "
        "it); or download the revisions yourself and give their folders");
  }
  std::error_code ec;
  fs::create_directories(dest, ec);
  if (ec) throw HfModelError("cannot create '" + dest + "': " + ec.message());
  util::CommandOptions o;
  o.stderrMode = util::Stderr::Capture;
  const auto r = util::runProgram({python, "-c", kHubScript, "fetch", repo, revision, dest}, o);
  std::string why = r.errors;
  while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
  if (why.size() > 600) why = "..." + why.substr(why.size() - 600);
  const std::string what = repo + " revision " + revision;
  switch (r.status) {
    case 0: break;
    case 2:
      throw HfModelError("cannot reach the Hugging Face hub for " + what +
                         " (offline, or HF_HUB_OFFLINE is set, and it is not in the local "
                         "cache): " +
                         why);
    case 3: throw HfModelError("the hub has no " + what + ": " + why);
    case 4: throw HfModelError(what + ": " + why);
    default: throw HfModelError("fetching " + what + " through " + python + " failed: " + why);
  }
  std::string commit = r.output;
  while (!commit.empty() && (commit.back() == '\n' || commit.back() == ' ')) commit.pop_back();
  std::ofstream(fs::path(dest) / kMarker) << repo << "\n" << revision << "\n" << commit << "\n";
}

void forgetHubRevision(const std::string& dest) {
  std::ifstream in(fs::path(dest) / kMarker);
  std::string repo, revision, commit;
  std::getline(in, repo);
  std::getline(in, revision);
  std::getline(in, commit);
  std::string why;
  if (util::removeTree(dest, &why) < 0) throw HfModelError("cannot delete '" + dest + "': " + why);
  if (repo.empty() || commit.empty()) return;  // not fetched by us: only the folder
  const std::string python = util::pythonWithModule("huggingface_hub");
  util::CommandOptions o;
  o.stderrMode = util::Stderr::Capture;
  const auto r = util::runProgram({python, "-c", kHubScript, "forget", repo, commit}, o);
  if (r.status != 0) {
    throw HfModelError("could not delete " + repo + " revision " + revision + " (" + commit +
                       ") from the Hugging Face cache: " + r.errors.substr(0, 400));
  }
}

}  // namespace depthlab::hf
