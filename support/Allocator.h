//===- Allocator.h - the allocator's policy for a long-running server -*- C++
//-*-===//
//
// A server that keeps documents open for hours allocates and frees big
// analyses from several threads. These hooks decide when free memory goes
// back to the system (mimalloc when the binary links it, glibc's malloc
// otherwise). No dependency but the C++ library: analysis, server and the
// binary all call them.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_SUPPORT_ALLOCATOR_H
#define TOSA_LSP_SUPPORT_ALLOCATOR_H

namespace tosa_lsp {

/// The allocator's policy for a long-running server; the binary sets it
/// first thing. With mimalloc: the heap lives in one range of address
/// space that useHugePages can advise for transparent huge pages; free
/// segments are decommitted at once; free pages go back at once except
/// while a KeepFreePages lives, or wait for mimalloc's delay in a huge page
/// heap (decommitFreePagesByDefault).
void configureAllocator();

/// Advises the heap for transparent huge pages from now on, for a big
/// document: a 4 KiB page fault cost ~10 us on a paravirtualised VM, a 2
/// MiB one ~0.2 us per 4 KiB, and faults were a fifth of a 50k-line
/// session's CPU. Not from the start: each thread's heap then touches
/// whole 2 MiB pages, and a 10k-line session cost 1.1x the CPU and +19 MiB.
/// TOSA_LSP_HUGE_PAGES=0 never, =1 from the start. Whether it did (false
/// without mimalloc, THP or the reserved range).
bool useHugePages();
/// The size of a document (its text) from which the server and the CLI
/// turn huge pages on.
constexpr unsigned long kHugePagesFromBytes = 2ul << 20;
/// Whether huge pages pay on this machine: not where the kernel reports
/// free memory to a hypervisor in blocks a huge page is cut from (free
/// page reporting at an order up to the buddy allocator's largest, 10).
/// There each huge page is fresh host memory, zeroed through the
/// hypervisor: a 50k-line session's CPU was 1.2x (0.48 s, bimodal
/// 0.35-0.66) against 4 KiB pages' 0.39 s, which come from recently
/// freed, still backed pages. TOSA_LSP_PAGE_REPORTING_ORDER stands for
/// the kernel's setting (tests; "none": no reporting).
bool hugePagesPay();
/// Whether useHugePages advised the heap. Whether the kernel backs it with
/// huge pages is its own setting (/sys/kernel/mm/transparent_hugepage).
bool heapUsesHugePages();

/// Hands back what the calling thread's allocator holds free (mimalloc
/// when the binary links it, glibc's malloc_trim otherwise), at once. With
/// mimalloc only the thread that owns a heap can return its pages. In a
/// huge page heap, the pages it freed earlier under mimalloc's delay stay
/// for its next work: this is the end of one piece of a burst (a part's
/// IR, a scratch parse).
void releaseFreeMemory();
/// The same, and also the pages freed earlier under mimalloc's delay: for
/// a thread that goes idle (a close, the end of a version's work). Called
/// mid-work, a 50k-line session gave back and faulted in again ~1.7 GB
/// (the session's CPU 1.1-1.3x; the flush's scope makes every thread give
/// back at once while it lasts).
void releaseAllFreeMemory();

/// A thread freed memory that other threads allocated (the reclaimer, a
/// replaced version): each of those threads collects it once, when it next
/// calls collectWhatOthersFreed. With mimalloc only a heap's own thread can
/// give back a page another thread emptied; idle threads (the message
/// loop, the pool, the Scheduler) held a replaced version's text, position
/// index and snapshot parts until their next allocation in the same pages.
void noteFreedForOthers();
/// Cheap when nothing was freed since this thread's last call; whether it
/// collected. `always`: also when nothing was noted (a pool thread after
/// a task: what the task itself freed, pages mimalloc keeps retired for
/// the next allocations, ~0.5-1 MiB a thread that went idle).
bool collectWhatOthersFreed(bool always = false);

/// Whether pages the allocator finds free go back to the system at once
/// (mimalloc's page decommit delay 0) or after mimalloc's delay, which is
/// only honoured when the thread that freed them allocates again in the
/// same segment: pages an analysis freed (the IR, the version a snapshot
/// replaced, freed by the reclaimer) stayed resident beside the next
/// analysis. A 50k-line one-function session peaked at 219 MiB with the
/// delay, 201 without; upstream's server 201. Off by default (the
/// libraries and tests keep mimalloc's own policy); configureAllocator
/// turns it on unless the heap is in huge pages.
void decommitFreePagesByDefault(bool on);

/// While one lives (any thread), pages the allocator finds free are given
/// back at once even if a KeepFreePages lives too: a closed document's
/// analysis, an inference's scratch parse, a whole-section parse.
/// With mimalloc, the switch sets the page decommit delay to 0 or back to
/// its default. Tests replace that switch (`on`: at once) with a hook;
/// nullptr restores it.
void setGiveBackFreePagesHook(void (*hook)(bool on));
class GiveBackFreePages {
public:
  GiveBackFreePages();
  ~GiveBackFreePages();
  GiveBackFreePages(const GiveBackFreePages &) = delete;
  GiveBackFreePages &operator=(const GiveBackFreePages &) = delete;
};

/// While one lives (and no GiveBackFreePages), free pages keep mimalloc's
/// delay: the server's message loop takes one from a message's first byte
/// until it is answered (not for a document's long text), since a reply
/// frees the pages the next request allocates again (inlay requests at
/// 200k lines faulted ~290 pages each, 0.6 -> 0.9 ms, when they went back
/// at once).
class KeepFreePages {
public:
  KeepFreePages();
  ~KeepFreePages();
  KeepFreePages(const KeepFreePages &) = delete;
  KeepFreePages &operator=(const KeepFreePages &) = delete;
};

/// Frees a big structure (IR, a parse) in bulk: while one lives, the pages
/// it frees stay committed (KeepFreePages); when it ends, the calling
/// thread's free pages go back at once (releaseFreeMemory), contiguous ones
/// together; in a huge page heap they wait, as it freed them under the
/// delay, for its next work or releaseAllFreeMemory. Freed page by page, each
/// went back by a madvise of its own, and each madvise is a TLB shootdown on
/// every core the process runs on (8-9 % of a 50k-line many-function session's
/// CPU).
class FreeInBulk {
public:
  FreeInBulk() = default;
  ~FreeInBulk();
  FreeInBulk(const FreeInBulk &) = delete;
  FreeInBulk &operator=(const FreeInBulk &) = delete;

private:
  KeepFreePages keep;
};

} // namespace tosa_lsp

#endif // TOSA_LSP_SUPPORT_ALLOCATOR_H
