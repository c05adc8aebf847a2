//! A connection's counters: [`ConnectionStats`].

/// Counters of one connection, for tests, the bench and overhead studies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConnectionStats {
    /// Requests queued for sending.
    pub requests: u64,
    /// Flushes: one per batch of queued frames handed to the socket.
    pub flushes: u64,
    /// Send operations (more than `flushes` only when the kernel took a partial write).
    pub writes: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Receives that delivered bytes (glommio: `recv` calls; io_uring: wake-ups of the
    /// reader, each taking every buffer that had arrived).
    pub reads: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Whole frames parsed.
    pub frames_read: u64,
    /// Requests failed by the deadline sweep.
    pub timeouts: u64,
    /// Answers that arrived after their request had timed out or been dropped.
    pub late_answers: u64,
    /// Server events dropped because nobody read them in time.
    pub events_dropped: u64,
    /// Keepalive probes sent.
    pub keepalives: u64,
    /// The most stream ids in use at once (in flight, including orphans).
    pub in_flight_high_water: u64,
}

impl ConnectionStats {
    /// Adds the counters of `other` (the high-water mark takes the larger).
    pub fn add(&mut self, other: &ConnectionStats) {
        self.requests += other.requests;
        self.flushes += other.flushes;
        self.writes += other.writes;
        self.bytes_written += other.bytes_written;
        self.reads += other.reads;
        self.bytes_read += other.bytes_read;
        self.frames_read += other.frames_read;
        self.timeouts += other.timeouts;
        self.late_answers += other.late_answers;
        self.events_dropped += other.events_dropped;
        self.keepalives += other.keepalives;
        self.in_flight_high_water = self.in_flight_high_water.max(other.in_flight_high_water);
    }
}
