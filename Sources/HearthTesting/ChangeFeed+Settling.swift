import HearthEngine

extension ChangeFeed {
    /// The feed's census once it has let go of what ended connections left: asked again until it is `expected`
    /// (by default nothing left, no load under way) or `limit` passes; answers the last census either way.
    package func settledCensus(expecting expected: Census = .empty, within limit: Duration = .seconds(120)) async -> Census {
        let deadline = ContinuousClock.now + limit
        while true {
            let census = await census()
            if census == expected || ContinuousClock.now >= deadline { return census }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }
}
