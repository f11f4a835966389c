/** How long a worker thread may take to start running its body before the caller gives up on it. */
const START_TIMEOUT_MS = 30_000

/**
 * Sleeps until signal[word] reaches `target` (the calling thread has nothing else to do
 * meanwhile); true once it has. With `startedWord`: false when the other thread has not set that
 * word to 1 within `startTimeoutMs` (30 s). A worker that never ran its body (it could not be created or load its
 * modules) would otherwise leave the caller waiting for ever; one that runs always moves the
 * word on, with its result or its error. `startedIn`: the array that holds the start word, where
 * it is not `signal`.
 */
export function awaitSignal(signal: Int32Array, word: number, target: number, startedWord?: number, startTimeoutMs = START_TIMEOUT_MS, startedIn = signal): boolean {
  const since = Date.now()
  for (let now = Atomics.load(signal, word); now < target; now = Atomics.load(signal, word)) {
    if (startedWord !== undefined && Atomics.load(startedIn, startedWord) === 0 && Date.now() - since > startTimeoutMs) return false
    Atomics.wait(signal, word, now, 1000)
  }
  return true
}
