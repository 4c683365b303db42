import Foundation
import ObjectGraph

/// Wall-clock timing and resident memory, as the report needs them.
package enum Measure {
    package static func seconds(_ body: () throws -> Void) rethrows -> Double {
        let start = ContinuousClock.now
        try body()
        return (ContinuousClock.now - start).seconds
    }

    package static func seconds(_ body: () async throws -> Void) async rethrows -> Double {
        let start = ContinuousClock.now
        try await body()
        return (ContinuousClock.now - start).seconds
    }

    /// The CPU time the whole process has used so far (user and system, every thread), in seconds.
    package static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// The CPU time the calling thread has used so far, in seconds.
    package static func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Writes the files' dirty pages back before a run is timed, so that no contender pays for the writing back of
    /// the files the contenders before it wrote.
    package static func settle() {
        sync()
    }

    /// The wall time and the process's CPU time `body` took, starting from settled files (see ``settle()``), and
    /// the calling thread's CPU time, where `body` runs.
    package static func timed(_ body: () throws -> Void) rethrows -> Sample {
        settle()
        let (cpu, thread) = (cpuSeconds(), threadCPUSeconds())
        let wall = try seconds(body)
        return Sample(wall: wall, cpu: cpuSeconds() - cpu, workThreadCPU: threadCPUSeconds() - thread)
    }

    /// The wall time and the process's CPU time `body` took, starting from settled files (see ``settle()``).
    package static func timed(_ body: () async throws -> Void) async rethrows -> Sample {
        settle()
        let cpu = cpuSeconds()
        let wall = try await seconds(body)
        return Sample(wall: wall, cpu: cpuSeconds() - cpu)
    }

    /// ``timed(_:)-(()->Void)`` of `body` run on `context`'s queue, with the CPU time of the thread it ran on there: the
    /// rest of the process's is other threads' (a large fetch reads ahead on one).
    package static func timed<T: Sendable>(
        on context: ObjectContext, _ body: @Sendable (isolated ObjectContext) throws -> T
    ) async throws -> (Sample, T) {
        var result: (value: T, threadCPU: Double)?
        var sample = try await timed {
            result = try await context.perform { ctx in
                let start = threadCPUSeconds()
                let value = try body(ctx)
                return (value, threadCPUSeconds() - start)
            }
        }
        sample.workThreadCPU = result!.threadCPU
        return (sample, result!.value)
    }

    package static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    package static func percentile(_ values: [Double], _ p: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
    }

    /// The process's resident memory now, in bytes (Linux: /proc/self/statm).
    package static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}

/// One timed run: wall time, and the CPU time of the whole process meanwhile (every thread, user and system).
package struct Sample: Sendable {
    package var wall: Double
    package var cpu: Double
    /// The CPU time of the thread the work was handed to (the caller's, or a context's queue), where known.
    package var workThreadCPU: Double?

    package init(wall: Double, cpu: Double, workThreadCPU: Double? = nil) {
        (self.wall, self.cpu, self.workThreadCPU) = (wall, cpu, workThreadCPU)
    }
}

/// Each contender's samples of one measure.
package struct Samples: Sendable {
    package var byContender: [String: [Sample]] = [:]

    package init(byContender: [String: [Sample]] = [:]) { self.byContender = byContender }

    package mutating func add(_ sample: Sample, for contender: String) { byContender[contender, default: []].append(sample) }

    /// Each contender's median wall time.
    package var wall: [String: Double] { byContender.mapValues { Measure.median($0.map(\.wall)) } }
    /// Each contender's median CPU time.
    package var cpu: [String: Double] { byContender.mapValues { Measure.median($0.map(\.cpu)) } }
    /// `contender`'s median CPU time on the thread its work ran on, and on the process's other threads; nil unless
    /// every sample knows its work thread's.
    package func threadSplit(of contender: String) -> (work: Double, others: Double)? {
        guard let samples = byContender[contender], !samples.isEmpty, samples.allSatisfy({ $0.workThreadCPU != nil }) else { return nil }
        return (Measure.median(samples.map { $0.workThreadCPU! }), Measure.median(samples.map { max(0, $0.cpu - $0.workThreadCPU!) }))
    }

    package static func + (a: Samples, b: Samples) -> Samples {
        Samples(byContender: a.byContender.merging(b.byContender, uniquingKeysWith: +))
    }
}

extension Duration {
    package var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
