// TF 1's readers (resource forms), on the CPU: TFRecordReaderV2,
// TextLineReaderV2, FixedLengthRecordReaderV2, WholeFileReaderV2 and
// IdentityReaderV2, and the verbs on them (ReaderReadV2, ReaderReadUpToV2,
// the counts, Reset, SerializeState and RestoreState). A reader takes its
// work (file names) from a queue of strings, one at a time, and produces the
// work's records with keys "<file>:<record>" as TF's do: the input end of TF
// 1's pipelines (string_input_producer, then a reader, then shuffle_batch),
// the CIFAR-10 tutorial's among them.
//
// A reader runs one verb at a time, in order of arrival, as TF's (its mutex),
// but a verb waiting for its turn or for work holds no thread: the turn and
// the dequeue are waits that the step's abort ends (resource_waits.h).
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "core/file_io.h"
#include "core/record_io.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/resource_mgr.h"
#include "kernels/cpu/queue.h"
#include "kernels/cpu/resource_waits.h"

namespace towerflow {
namespace {

// TF's ReaderBaseState proto (proto3: zero fields left out): the counts and
// the current work.
struct ReaderState {
  int64_t work_started = 0;
  int64_t work_finished = 0;
  int64_t num_records_produced = 0;
  std::string current_work;
};

void PutVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

std::string EncodeState(const ReaderState& s) {
  std::string out;
  const int64_t counts[] = {s.work_started, s.work_finished, s.num_records_produced};
  for (int field = 1; field <= 3; ++field) {
    if (counts[field - 1] == 0) continue;
    PutVarint(static_cast<uint64_t>(field) << 3, &out);
    PutVarint(static_cast<uint64_t>(counts[field - 1]), &out);
  }
  if (!s.current_work.empty()) {
    PutVarint((4 << 3) | 2, &out);
    PutVarint(s.current_work.size(), &out);
    out += s.current_work;
  }
  return out;
}

bool GetVarint(const std::string& in, size_t* at, uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift < 64 && *at < in.size(); shift += 7) {
    const uint8_t byte = static_cast<uint8_t>(in[(*at)++]);
    *v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

// False unless `in` is a ReaderBaseState (its four fields, any order).
bool DecodeState(const std::string& in, ReaderState* s) {
  size_t at = 0;
  while (at < in.size()) {
    uint64_t tag = 0, v = 0;
    if (!GetVarint(in, &at, &tag) || !GetVarint(in, &at, &v)) return false;
    const uint64_t field = tag >> 3, wire = tag & 7;
    if (field >= 1 && field <= 3 && wire == 0) {
      int64_t* counts[] = {&s->work_started, &s->work_finished, &s->num_records_produced};
      *counts[field - 1] = static_cast<int64_t>(v);
    } else if (field == 4 && wire == 2 && v <= in.size() - at) {
      s->current_work = in.substr(at, v);
      at += v;
    } else {
      return false;
    }
  }
  return true;
}

// A reader: the counts and the current work of TF's ReaderBase, and the
// records of one kind of file.
class Reader : public ResourceBase {
 public:
  explicit Reader(std::string name) : name_(std::move(name)) {}
  std::string DebugString() const override { return name_; }

  // Waits for the reader's turn (`id` for CancelTurn); `done` runs with OK
  // when it is this verb's, which must then call EndTurn.
  void AwaitTurn(int64_t id, AsyncOpKernel::DoneCallback done) {
    absl::Status status;
    {
      absl::MutexLock lock(&turn_mu_);
      if (turns_.WasCancelled(id)) {
        status = absl::CancelledError(absl::StrCat(name_, ": cancelled"));
      } else if (busy_) {
        turns_.Add(id, std::move(done));
        return;
      } else {
        busy_ = true;
      }
    }
    done(status);
  }
  void CancelTurn(int64_t id, const absl::Status& status) {
    AsyncOpKernel::DoneCallback done;
    bool got;
    {
      absl::MutexLock lock(&turn_mu_);
      got = turns_.Take(id, &done);
    }
    if (got) done(status);
  }
  void EndTurn() {
    AsyncOpKernel::DoneCallback next;
    {
      absl::MutexLock lock(&turn_mu_);
      if (turns_.empty()) {
        busy_ = false;
        return;
      }
      next = std::move(turns_.front().second);
      turns_.pop_front();
    }
    next(absl::OkStatus());  // still busy: the turn passes on
  }

  // The rest runs in the reader's turn only.
  bool WorkInProgress() const { return work_finished_ < work_started_; }
  absl::Status StartWork(std::string work) {
    work_ = std::move(work);
    TW_RETURN_IF_ERROR(OnWorkStarted());
    ++work_started_;
    return absl::OkStatus();
  }
  // The next record of the current work: `produced` with it, `at_end` when
  // the work is done (then the work counts as finished).
  absl::Status Read(std::string* key, std::string* value, bool* produced, bool* at_end) {
    *produced = *at_end = false;
    TW_RETURN_IF_ERROR(ReadRecord(key, value, produced, at_end));
    if (!*produced && !*at_end) {
      return absl::InternalError(absl::StrCat(name_, " produced nothing and did not end"));
    }
    if (*produced) ++num_records_produced_;
    if (*at_end) {
      OnWorkFinished();
      work_finished_ = work_started_.load();
    }
    return absl::OkStatus();
  }
  void Reset() {
    work_started_ = work_finished_ = num_records_produced_ = 0;
    work_.clear();
    OnWorkFinished();
  }
  virtual absl::StatusOr<std::string> SerializeState() {
    return absl::UnimplementedError(absl::StrCat(name_, ": Reader SerializeState"));
  }
  virtual absl::Status RestoreState(const std::string&) {
    return absl::UnimplementedError(absl::StrCat(name_, ": Reader RestoreState"));
  }

  int64_t num_records_produced() const { return num_records_produced_; }
  int64_t work_finished() const { return work_finished_; }

 protected:
  const std::string& work() const { return work_; }
  std::string KeyName(const std::string& key) const { return absl::StrCat(work_, ":", key); }
  ReaderState BaseState() const {
    return {work_started_, work_finished_, num_records_produced_, work_};
  }
  absl::Status RestoreBaseState(const ReaderState& s) {
    if (s.work_started < 0 || s.work_finished < 0 || s.num_records_produced < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Unexpected negative value when restoring in ", name_));
    }
    if (s.work_started > s.work_finished) {
      return absl::InvalidArgumentError(
          absl::StrCat("Inconsistent work started vs. finished when restoring in ", name_));
    }
    work_started_ = s.work_started;
    work_finished_ = s.work_finished;
    num_records_produced_ = s.num_records_produced;
    work_ = s.current_work;
    return absl::OkStatus();
  }
  const std::string name_;

 private:
  virtual absl::Status OnWorkStarted() { return absl::OkStatus(); }
  virtual absl::Status ReadRecord(std::string* key, std::string* value, bool* produced,
                                  bool* at_end) = 0;
  virtual void OnWorkFinished() {}

  absl::Mutex turn_mu_;
  bool busy_ ABSL_GUARDED_BY(turn_mu_) = false;
  Waits<AsyncOpKernel::DoneCallback> turns_ ABSL_GUARDED_BY(turn_mu_);
  // Written in turns only; read by the count ops at any time.
  std::atomic<int64_t> work_started_{0}, work_finished_{0}, num_records_produced_{0};
  std::string work_;
};

class IdentityReader : public Reader {
 public:
  using Reader::Reader;
  absl::StatusOr<std::string> SerializeState() override { return EncodeState(BaseState()); }
  absl::Status RestoreState(const std::string& state) override {
    ReaderState s;
    if (!DecodeState(state, &s)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Could not parse state for ", name_, ": ", absl::CHexEscape(state)));
    }
    return RestoreBaseState(s);
  }

 private:
  absl::Status ReadRecord(std::string* key, std::string* value, bool* produced,
                          bool* at_end) override {
    *key = *value = work();
    *produced = *at_end = true;
    return absl::OkStatus();
  }
};

class WholeFileReader : public Reader {
 public:
  using Reader::Reader;

 private:
  absl::Status ReadRecord(std::string* key, std::string* value, bool* produced,
                          bool* at_end) override {
    TW_ASSIGN_OR_RETURN(*value, ReadFileToString(work()));
    *key = work();
    *produced = *at_end = true;
    return absl::OkStatus();
  }
};

// A regular file open for reading (OpenRegularFileStream: a directory, a FIFO
// or a device is refused, naming the path), closed with its owner.
struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

absl::StatusOr<File> OpenFile(const std::string& path) {
  TW_ASSIGN_OR_RETURN(std::FILE * f, OpenRegularFileStream(path));
  return File(f);
}

class TextLineReader : public Reader {
 public:
  TextLineReader(std::string name, int64_t skip_header_lines)
      : Reader(std::move(name)), skip_header_lines_(skip_header_lines) {}

 private:
  absl::Status OnWorkStarted() override {
    line_number_ = 0;
    TW_ASSIGN_OR_RETURN(file_, OpenFile(work()));
    std::string skipped;
    for (int64_t i = 0; i < skip_header_lines_; ++i) {
      TW_ASSIGN_OR_RETURN(const bool got, NextLine(&skipped));
      if (!got) break;
    }
    return absl::OkStatus();
  }
  absl::Status ReadRecord(std::string* key, std::string* value, bool* produced,
                          bool* at_end) override {
    TW_ASSIGN_OR_RETURN(const bool got, NextLine(value));
    if (!got) {
      *at_end = true;
      return absl::OkStatus();
    }
    *key = KeyName(absl::StrCat(line_number_));
    *produced = true;
    return absl::OkStatus();
  }
  void OnWorkFinished() override { file_.reset(); }

  // The next line without its "\n" (or "\r\n"), counted: false at the end.
  absl::StatusOr<bool> NextLine(std::string* line) {
    line->clear();
    int c;
    while ((c = getc_unlocked(file_.get())) != EOF && c != '\n') {
      line->push_back(static_cast<char>(c));
    }
    if (std::ferror(file_.get())) {
      return absl::DataLossError(absl::StrCat(name_, ": reading '", work(), "' failed"));
    }
    if (c == EOF && line->empty()) return false;
    if (!line->empty() && line->back() == '\r') line->pop_back();
    ++line_number_;
    return true;
  }

  const int64_t skip_header_lines_;
  File file_;
  int64_t line_number_ = 0;
};

class FixedLengthRecordReader : public Reader {
 public:
  FixedLengthRecordReader(std::string name, int64_t header, int64_t record, int64_t footer,
                          int64_t hop)
      : Reader(std::move(name)),
        header_(header),
        record_(record),
        footer_(footer),
        hop_(hop > 0 ? hop : record) {}

 private:
  absl::Status OnWorkStarted() override {
    record_number_ = 0;
    TW_ASSIGN_OR_RETURN(file_, OpenFile(work()));
    if (fseeko(file_.get(), 0, SEEK_END) != 0) return ReadError();
    limit_ = static_cast<int64_t>(ftello(file_.get())) - footer_;
    position_ = -1;  // seek to the first record
    return absl::OkStatus();
  }
  absl::Status ReadRecord(std::string* key, std::string* value, bool* produced,
                          bool* at_end) override {
    const int64_t start = header_ + record_number_ * hop_;
    if (start + record_ > limit_) {  // what is left before the footer is no record
      *at_end = true;
      return absl::OkStatus();
    }
    // Records one after another are read on; hops and overlaps seek.
    if (start != position_ && fseeko(file_.get(), start, SEEK_SET) != 0) return ReadError();
    value->resize(record_);
    if (std::fread(value->data(), 1, record_, file_.get()) != static_cast<size_t>(record_)) {
      return ReadError();
    }
    position_ = start + record_;
    *key = KeyName(absl::StrCat(record_number_++));
    *produced = true;
    return absl::OkStatus();
  }
  void OnWorkFinished() override { file_.reset(); }

  absl::Status ReadError() const {
    return absl::DataLossError(
        absl::StrCat(name_, ": reading record ", record_number_, " of '", work(), "' failed"));
  }

  const int64_t header_, record_, footer_, hop_;
  File file_;
  int64_t limit_ = 0;
  int64_t position_ = -1;  // the file's, -1 before the first read
  int64_t record_number_ = 0;
};

class TFRecordReader : public Reader {
 public:
  TFRecordReader(std::string name, RecordCompression compression)
      : Reader(std::move(name)), compression_(compression) {}

 private:
  absl::Status OnWorkStarted() override {
    TW_ASSIGN_OR_RETURN(file_, RecordReader::Open(work(), compression_));
    return absl::OkStatus();
  }
  absl::Status ReadRecord(std::string* key, std::string* value, bool* produced,
                          bool* at_end) override {
    const uint64_t offset = file_->offset();
    TW_ASSIGN_OR_RETURN(const bool got, file_->ReadRecord(value));
    if (!got) {
      *at_end = true;
      return absl::OkStatus();
    }
    *key = KeyName(absl::StrCat(offset));
    *produced = true;
    return absl::OkStatus();
  }
  void OnWorkFinished() override { file_.reset(); }

  const RecordCompression compression_;
  std::unique_ptr<RecordReader> file_;
};

enum class ReaderKind { kTFRecord, kTextLine, kFixedLength, kWholeFile, kIdentity };

// The reader ops: the reader's handle; the reader is made on the first run.
class ReaderOp : public OpKernel {
 public:
  explicit ReaderOp(ReaderKind kind) : kind_(kind) {}
  bool IsExpensive() const override { return false; }
  absl::Status Init(const KernelConstruction& c) override {
    const char* type = "";
    switch (kind_) {
      case ReaderKind::kTFRecord: {
        type = "TFRecordReader";
        std::string compression;
        TW_RETURN_IF_ERROR(c.GetAttr("compression_type", &compression));
        absl::StatusOr<RecordCompression> parsed = ParseRecordCompression(compression);
        if (!parsed.ok()) {
          return absl::InvalidArgumentError(
              absl::StrCat(c.name(), ": ", parsed.status().message()));
        }
        compression_ = *parsed;
        break;
      }
      case ReaderKind::kTextLine:
        type = "TextLineReader";
        TW_RETURN_IF_ERROR(c.GetAttr("skip_header_lines", &skip_header_lines_));
        break;
      case ReaderKind::kFixedLength: {
        type = "FixedLengthRecordReader";
        TW_RETURN_IF_ERROR(c.GetAttr("header_bytes", &header_));
        TW_RETURN_IF_ERROR(c.GetAttr("record_bytes", &record_));
        TW_RETURN_IF_ERROR(c.GetAttr("footer_bytes", &footer_));
        TW_RETURN_IF_ERROR(c.GetAttr("hop_bytes", &hop_));
        std::string encoding;
        TW_RETURN_IF_ERROR(c.GetAttr("encoding", &encoding));
        if (header_ < 0 || record_ <= 0 || footer_ < 0 || hop_ < 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              c.name(), ": header_bytes ", header_, ", footer_bytes ", footer_, " and hop_bytes ",
              hop_, " must be >= 0 and record_bytes ", record_, " > 0"));
        }
        if (!encoding.empty()) {
          return absl::UnimplementedError(absl::StrCat(c.name(), ": compressed files (encoding '",
                                                       encoding, "') are not read yet"));
        }
        break;
      }
      case ReaderKind::kWholeFile:
        type = "WholeFileReader";
        break;
      case ReaderKind::kIdentity:
        type = "IdentityReader";
        break;
    }
    name_ = absl::StrCat(type, " '", c.name(), "'");
    TW_ASSIGN_OR_RETURN(handle_, MakeHandle(c, type));
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    const ResourceHandle& h = *handle_.data<ResourceHandle>();
    TW_ASSIGN_OR_RETURN(std::shared_ptr<Reader> reader,
                        ctx->resource_manager()->LookupOrCreate<Reader>(
                            h.container, h.name,
                            [&]() -> absl::StatusOr<std::shared_ptr<Reader>> { return Make(); }));
    (void)reader;
    return ctx->set_output(0, handle_);
  }

 private:
  std::shared_ptr<Reader> Make() const {
    switch (kind_) {
      case ReaderKind::kTFRecord:
        return std::make_shared<TFRecordReader>(name_, compression_);
      case ReaderKind::kTextLine:
        return std::make_shared<TextLineReader>(name_, skip_header_lines_);
      case ReaderKind::kFixedLength:
        return std::make_shared<FixedLengthRecordReader>(name_, header_, record_, footer_, hop_);
      case ReaderKind::kWholeFile:
        return std::make_shared<WholeFileReader>(name_);
      case ReaderKind::kIdentity:
        break;
    }
    return std::make_shared<IdentityReader>(name_);
  }

  const ReaderKind kind_;
  std::string name_;
  int64_t skip_header_lines_ = 0;
  int64_t header_ = 0, record_ = 0, footer_ = 0, hop_ = 0;
  RecordCompression compression_ = RecordCompression::kNone;
  Tensor handle_;
};

// Runs `verb` in the reader's turn (waiting for it without a thread), then
// passes the turn on; `verb` ends by calling its argument with the status.
void InReadersTurn(KernelContext* ctx, std::shared_ptr<Reader> reader,
                   AsyncOpKernel::DoneCallback done,
                   std::function<void(AsyncOpKernel::DoneCallback)> verb) {
  StartCancellableWait(
      ctx, [reader](int64_t id, const absl::Status& s) { reader->CancelTurn(id, s); },
      [reader, done, verb = std::move(verb)](absl::Status s) {
        if (!s.ok()) return done(s);
        verb([reader, done](absl::Status s) {
          done(s);
          reader->EndTurn();
        });
      },
      [reader](int64_t id, AsyncOpKernel::DoneCallback granted) {
        reader->AwaitTurn(id, std::move(granted));
      });
}

// One ReaderReadV2 (`up_to` < 0) or ReaderReadUpToV2 in the reader's turn:
// reads, taking work from the queue when the reader has none.
struct ReadCall {
  KernelContext* ctx;
  std::shared_ptr<Reader> reader;
  std::shared_ptr<Queue> queue;
  int64_t up_to;
  std::vector<std::string> keys, values;
  AsyncOpKernel::DoneCallback end;

  // Reads until the call is answered, taking work from the queue whenever
  // the reader has none.
  static void Continue(std::shared_ptr<ReadCall> call) {
    Reader& r = *call->reader;
    while (call->up_to < 0 || static_cast<int64_t>(call->keys.size()) < call->up_to) {
      if (!r.WorkInProgress()) {
        if (!NextWork(call)) return;
        continue;
      }
      std::string key, value;
      bool produced, at_end;
      if (absl::Status s = r.Read(&key, &value, &produced, &at_end); !s.ok()) {
        return call->end(s);
      }
      if (produced) {
        call->keys.push_back(std::move(key));
        call->values.push_back(std::move(value));
      }
      if (call->up_to < 0 ? produced : at_end && !call->keys.empty()) break;
    }
    call->end(call->SetOutputs());
  }

  // Dequeues the next work (a file name) and starts it: true when that
  // happened at once and the caller reads on. When the dequeue waits, its
  // callback goes on reading (false here). A dequeue answered at once goes
  // on in the caller's loop, not in its callback, so a queue of many empty
  // files costs no stack.
  static bool NextWork(const std::shared_ptr<ReadCall>& call) {
    struct Handoff {
      absl::Mutex mu;
      bool returned ABSL_GUARDED_BY(mu) = false;
      bool answered ABSL_GUARDED_BY(mu) = false;
      absl::Status status ABSL_GUARDED_BY(mu);
    };
    auto work = std::make_shared<Queue::Tuple>();
    auto handoff = std::make_shared<Handoff>();
    std::shared_ptr<Queue> q = call->queue;
    StartCancellableWait(
        call->ctx, [q](int64_t id, const absl::Status& s) { q->CancelDequeue(id, s); },
        [call, work, handoff](absl::Status s) {
          {
            absl::MutexLock lock(&handoff->mu);
            if (!handoff->returned) {  // answered at once: the caller goes on
              handoff->answered = true;
              handoff->status = s;
              return;
            }
          }
          if (call->StartWorkFrom(*work, s)) Continue(call);
        },
        [q, work](int64_t id, AsyncOpKernel::DoneCallback dequeued) {
          q->Dequeue(id, 1, /*batch=*/false, /*up_to=*/false,
                     [work, dequeued](absl::Status s, Queue::Tuple t) {
                       *work = std::move(t);
                       dequeued(s);
                     });
        });
    absl::Status s;
    {
      absl::MutexLock lock(&handoff->mu);
      handoff->returned = true;
      if (!handoff->answered) return false;
      s = handoff->status;
    }
    return call->StartWorkFrom(*work, s);
  }

  // Starts the dequeued `work`; false, with the call answered, on an error.
  bool StartWorkFrom(const Queue::Tuple& work, absl::Status s) {
    if (s.ok() &&
        (work.size() != 1 || work[0].dtype() != DT_STRING || work[0].NumElements() != 1)) {
      s = absl::InvalidArgumentError(absl::StrCat(
          reader->DebugString(), ": expected a queue of single strings (file names), dequeued ",
          work.size(), " components"));
    }
    if (s.ok()) s = reader->StartWork(work[0].data<std::string>()[0]);
    if (s.ok()) return true;
    end(s);
    return false;
  }

  absl::Status SetOutputs() {
    if (up_to < 0) {
      Tensor key(DT_STRING, TensorShape({})), value(DT_STRING, TensorShape({}));
      key.data<std::string>()[0] = std::move(keys[0]);
      value.data<std::string>()[0] = std::move(values[0]);
      TW_RETURN_IF_ERROR(ctx->set_output(0, std::move(key)));
      return ctx->set_output(1, std::move(value));
    }
    const int64_t n = static_cast<int64_t>(keys.size());
    Tensor k(DT_STRING, TensorShape({n})), v(DT_STRING, TensorShape({n}));
    for (int64_t i = 0; i < n; ++i) {
      k.data<std::string>()[i] = std::move(keys[i]);
      v.data<std::string>()[i] = std::move(values[i]);
    }
    TW_RETURN_IF_ERROR(ctx->set_output(0, std::move(k)));
    return ctx->set_output(1, std::move(v));
  }
};

class ReaderReadOp : public AsyncOpKernel {
 public:
  explicit ReaderReadOp(bool up_to) : up_to_(up_to) {}
  void ComputeAsync(KernelContext* ctx, DoneCallback done) override {
    absl::StatusOr<std::shared_ptr<Reader>> reader = LookupInput<Reader>(ctx, "reader");
    if (!reader.ok()) return done(reader.status());
    absl::StatusOr<std::shared_ptr<Queue>> queue = LookupInput<Queue>(ctx, "queue", 1);
    if (!queue.ok()) return done(queue.status());
    int64_t n = -1;
    if (up_to_) {
      absl::StatusOr<int64_t> requested = ScalarInput(ctx, 2, DT_INT64, "num_records");
      if (!requested.ok()) return done(requested.status());
      n = *requested;
      if (n < 0) {
        return done(absl::InvalidArgumentError(
            absl::StrCat(ctx->name(), ": num_records must be >= 0, not ", n)));
      }
    }
    auto call = std::make_shared<ReadCall>();
    call->ctx = ctx;
    call->reader = *reader;
    call->queue = *queue;
    call->up_to = n;
    InReadersTurn(ctx, *reader, std::move(done), [call](DoneCallback end) {
      call->end = std::move(end);
      ReadCall::Continue(call);
    });
  }

 private:
  const bool up_to_;
};

// The other verbs, in the reader's turn.
class ReaderVerbOp : public AsyncOpKernel {
 public:
  enum Verb { kReset, kSerialize, kRestore };
  explicit ReaderVerbOp(Verb verb) : verb_(verb) {}
  void ComputeAsync(KernelContext* ctx, DoneCallback done) override {
    absl::StatusOr<std::shared_ptr<Reader>> reader = LookupInput<Reader>(ctx, "reader");
    if (!reader.ok()) return done(reader.status());
    std::string state;
    if (verb_ == kRestore) {
      const Tensor& t = ctx->input(1);
      if (t.dtype() != DT_STRING || t.NumElements() != 1) {
        return done(absl::InvalidArgumentError(absl::StrCat(
            ctx->name(), ": state must be one string, not ", t.shape().DebugString())));
      }
      state = t.data<std::string>()[0];
    }
    std::shared_ptr<Reader> r = *reader;
    InReadersTurn(ctx, r, std::move(done),
                  [this, ctx, r, state](DoneCallback end) { end(Run(ctx, *r, state)); });
  }

 private:
  absl::Status Run(KernelContext* ctx, Reader& r, const std::string& state) const {
    switch (verb_) {
      case kReset:
        r.Reset();
        return absl::OkStatus();
      case kSerialize: {
        TW_ASSIGN_OR_RETURN(std::string s, r.SerializeState());
        Tensor out(DT_STRING, TensorShape({}));
        out.data<std::string>()[0] = std::move(s);
        return ctx->set_output(0, std::move(out));
      }
      case kRestore: {
        absl::Status s = r.RestoreState(state);
        if (!s.ok()) r.Reset();  // as TF: a failed restore leaves a reset reader
        return s;
      }
    }
    return absl::OkStatus();
  }

  const Verb verb_;
};

class ReaderCountOp : public OpKernel {
 public:
  explicit ReaderCountOp(bool records) : records_(records) {}
  bool IsExpensive() const override { return false; }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<Reader> reader, LookupInput<Reader>(ctx, "reader"));
    Tensor n(DT_INT64, TensorShape({}));
    n.data<int64_t>()[0] = records_ ? reader->num_records_produced() : reader->work_finished();
    return ctx->set_output(0, std::move(n));
  }

 private:
  const bool records_;
};

TW_REGISTER_KERNELS(reader_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  const auto reader = [](ReaderKind kind) {
    return [kind] { return std::make_unique<ReaderOp>(kind); };
  };
  RegisterKernel(cpu("TFRecordReaderV2"), reader(ReaderKind::kTFRecord));
  RegisterKernel(cpu("TextLineReaderV2"), reader(ReaderKind::kTextLine));
  RegisterKernel(cpu("FixedLengthRecordReaderV2"), reader(ReaderKind::kFixedLength));
  RegisterKernel(cpu("WholeFileReaderV2"), reader(ReaderKind::kWholeFile));
  RegisterKernel(cpu("IdentityReaderV2"), reader(ReaderKind::kIdentity));
  RegisterKernel(cpu("ReaderReadV2"), [] { return std::make_unique<ReaderReadOp>(false); });
  RegisterKernel(cpu("ReaderReadUpToV2"), [] { return std::make_unique<ReaderReadOp>(true); });
  RegisterKernel(cpu("ReaderNumRecordsProducedV2"),
                 [] { return std::make_unique<ReaderCountOp>(true); });
  RegisterKernel(cpu("ReaderNumWorkUnitsCompletedV2"),
                 [] { return std::make_unique<ReaderCountOp>(false); });
  const auto verb = [](ReaderVerbOp::Verb v) {
    return [v] { return std::make_unique<ReaderVerbOp>(v); };
  };
  RegisterKernel(cpu("ReaderResetV2"), verb(ReaderVerbOp::kReset));
  RegisterKernel(cpu("ReaderSerializeStateV2"), verb(ReaderVerbOp::kSerialize));
  RegisterKernel(cpu("ReaderRestoreStateV2"), verb(ReaderVerbOp::kRestore));
}

}  // namespace
}  // namespace towerflow
