//! The sequential specification the histories are checked against: one register per key,
//! absent at first, with write, compare-and-set and read. Each step says whether an
//! operation, with the answer it got, could have happened in a given state, and the state
//! after it.

/// A register's value: `None` while the key holds none.
pub(crate) type State = Option<i64>;

/// One operation as the register sees it: what it asked and what it was answered, if the
/// answer is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// A write of this value (its acknowledgement says nothing about the state).
    Write(i64),
    /// A compare-and-set, with whether it applied (`None`: no answer known).
    Cas {
        /// The value it expected (`None`: absent).
        expected: Option<i64>,
        /// The value it writes if it applies.
        new: i64,
        /// Whether it applied, when known.
        applied: Option<bool>,
    },
    /// A read that returned this value.
    Read(State),
}

impl Step {
    /// The state after this step taken in `state`, or `None` if the step's answer cannot
    /// come from `state` (a read of another value, a compare-and-set that applied although
    /// the value was not the expected one, or did not although it was).
    pub(crate) fn apply(self, state: State) -> Option<State> {
        match self {
            Self::Write(value) => Some(Some(value)),
            Self::Cas {
                expected,
                new,
                applied,
            } => {
                let matches = state == expected;
                match applied {
                    Some(applied) if applied != matches => None,
                    _ if matches => Some(Some(new)),
                    _ => Some(state),
                }
            }
            Self::Read(value) => (value == state).then_some(state),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each step against a register holding 1 and an absent one: a write always goes, a read
    /// must see the state, a compare-and-set's answer must fit the state, and one without an
    /// answer applies exactly when the state is the expected one.
    #[test]
    fn steps_follow_the_register() {
        assert_eq!(Step::Write(5).apply(Some(1)), Some(Some(5)));
        assert_eq!(Step::Write(5).apply(None), Some(Some(5)));
        assert_eq!(Step::Read(Some(1)).apply(Some(1)), Some(Some(1)));
        assert_eq!(Step::Read(Some(1)).apply(None), None);
        assert_eq!(Step::Read(None).apply(None), Some(None));
        let cas = |expected, applied| Step::Cas {
            expected,
            new: 9,
            applied,
        };
        assert_eq!(cas(Some(1), Some(true)).apply(Some(1)), Some(Some(9)));
        assert_eq!(cas(Some(1), Some(true)).apply(Some(2)), None);
        assert_eq!(cas(Some(1), Some(false)).apply(Some(1)), None);
        assert_eq!(cas(Some(1), Some(false)).apply(Some(2)), Some(Some(2)));
        assert_eq!(cas(None, Some(true)).apply(None), Some(Some(9)));
        assert_eq!(cas(None, Some(true)).apply(Some(1)), None);
        assert_eq!(cas(Some(1), None).apply(Some(1)), Some(Some(9)));
        assert_eq!(cas(Some(1), None).apply(Some(2)), Some(Some(2)));
    }
}
