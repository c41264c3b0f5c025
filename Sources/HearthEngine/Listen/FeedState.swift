import HearthCore
import Synchronization
import HearthAuth

/// The feed's bookkeeping, touched only by `ChangeFeed.run`'s loop: views, their listeners, and the indexes
/// that find the views a change may concern.
final class FeedState {
    /// One result kept current, shared by the listeners of one query (or one document).
    final class View {
        enum Phase { case loading, live }
        let id: Int
        let key: String
        let target: ListenTarget
        var phase = Phase.loading
        var generation = 0
        var model: TargetView?
        /// Changes are applied only past this position (the position the result was read at).
        var floor = LogPosition(sequence: -1, commitTime: Timestamp(microseconds: 0))
        /// Changes that arrived while loading.
        var buffer: [ChangeRecord] = []
        var subscribers: [Subscriber] = []
        /// Subscribers still waiting for their first snapshot.
        var pending: Set<SubscriberKey> = []

        init(id: Int, key: String, target: ListenTarget) {
            self.id = id
            self.key = key
            self.target = target
        }
    }

    struct SubscriberKey: Hashable {
        let connection: Int
        let serial: Int
    }

    let feed: ChangeFeed
    var views: [Int: View] = [:]
    var shared: [String: Int] = [:]
    var byDocument: [String: Set<Int>] = [:]
    var byCollection: [String: Set<Int>] = [:]
    var byGroup: [String: Set<Int>] = [:]
    /// Each open connection's targets: serial → view.
    var connections: [Int: (connection: ListenConnection, targets: [Int: Int])] = [:] {
        didSet { feed.openConnectionCount.store(connections.count, ordering: .relaxed) }
    }
    var position = LogPosition(sequence: 0, commitTime: Timestamp(microseconds: 0))
    var nextViewID = 0
    /// The latest rules generation announced; targets authorized under an older one are checked again.
    var rulesGeneration = 0

    init(feed: ChangeFeed) { self.feed = feed }

    /// Handles one message; `load` starts a read of a view's result, `reauthorize` a check of targets against
    /// the rules in force (answered with `.denied`).
    func handle(_ message: FeedMessage, load: (LoadRequest) -> Void, refresh: (Int, ListenSession) -> Void = { _, _ in },
                reauthorize: ([Subscriber]) -> Void) {
        switch message {
        case .connect(let connection):
            if connections[connection.id] == nil { connections[connection.id] = (connection, [:]) }
        case .commit(let records):
            feed.handOver.taken(records)
            commit(records, load: load)
        case .changesMissed: reloadAll(load: load)
        case .add(let subscriber):
            add(subscriber, load: load)
            if subscriber.rulesGeneration < rulesGeneration && !subscriber.identity.isAdmin {
                // Authorized under rules replaced before it arrived here, after the reload's own re-check.
                reauthorize([subscriber])
            }
        case .rulesChanged(let generation):
            guard generation > rulesGeneration else { return }
            rulesGeneration = generation
            let open = views.values.flatMap { view in view.subscribers.filter { !$0.identity.isAdmin } }
            if !open.isEmpty { reauthorize(open) }
        case .denied(let denials):
            for denial in denials {
                guard let viewID = connections[denial.connection]?.targets[denial.serial], let view = views[viewID],
                      let subscriber = view.subscribers.first(where: {
                          $0.connection.id == denial.connection && $0.serial == denial.serial
                      }) else { continue }  // gone meanwhile
                end(subscriber, denial.error, in: view)
            }
        case .remove(let connection, _, let serial): remove(SubscriberKey(connection: connection, serial: serial))
        case .disconnect(let connection): disconnect(connection)
        case .loaded(let view, let generation, let result): loaded(view, generation, result, load: load)
        case .revoke(let event) where !event.revokes:
            // The account's claims changed: its connections take their sessions' new identity.
            for (id, entry) in connections {
                guard let session = entry.connection.session, event.affects(sessionID: session.sessionID, uid: session.uid)
                else { continue }
                refresh(id, session)
            }
        case .identityChanged(let id, let identity):
            guard let entry = connections[id] else { return }
            entry.connection.refresh(identity)
            var changed: [Subscriber] = []
            for viewID in Set(entry.targets.values) {
                guard let view = views[viewID] else { continue }
                for k in view.subscribers.indices where view.subscribers[k].connection.id == id {
                    view.subscribers[k].identity = identity
                    changed.append(view.subscribers[k])
                }
            }
            if !changed.isEmpty { reauthorize(changed) }
        case .census(let reply):
            reply.resume(returning: census())  // `run` answers it before it gets here, adding its task group
        case .revoke(let event):
            for (id, entry) in connections {
                guard let session = entry.connection.session, event.affects(sessionID: session.sessionID, uid: session.uid)
                else { continue }
                entry.connection.terminate(.unauthenticated("the session was revoked (\(event.reason.rawValue)); sign in again"),
                                           closeCode: 1008)
                disconnect(id)
            }
        }
    }

    /// The counts of what this state holds (`ChangeFeed.census`).
    func census() -> ChangeFeed.Census {
        var census = ChangeFeed.Census()
        census.connections = connections.count
        census.targets = connections.values.reduce(0) { $0 + $1.targets.count }
        census.views = views.count
        census.subscribers = views.values.reduce(0) { $0 + $1.subscribers.count }
        census.sharedViews = shared.count
        census.indexKeys = byDocument.count + byCollection.count + byGroup.count
        census.connectionObjects = feed.connectionObjectCount.load(ordering: .relaxed)
        return census
    }

    // MARK: Targets

    func add(_ subscriber: Subscriber, load: (LoadRequest) -> Void) {
        let connection = subscriber.connection
        guard connection.isCurrent(subscriber.targetID, subscriber.serial) else { return }
        let key = SubscriberKey(connection: connection.id, serial: subscriber.serial)
        if subscriber.resume == nil, let id = shared[subscriber.target.sharingKey], let view = views[id] {
            attach(subscriber, key, to: view)
            if view.phase == .live, let model = view.model {
                view.pending.remove(key)
                deliver(ListenSnapshot(targetID: subscriber.targetID, initial: true, reset: false,
                                       changes: model.diff(from: [], to: model.documents), changesJSON: [],
                                       position: max(view.floor, position), serial: subscriber.serial), to: subscriber, in: view)
            }
            return
        }
        nextViewID += 1
        let sharingKey = subscriber.resume == nil ? subscriber.target.sharingKey : "private:\(nextViewID)"
        let view = View(id: nextViewID, key: sharingKey, target: subscriber.target)
        let first = views.isEmpty
        views[view.id] = view
        if subscriber.resume == nil { shared[sharingKey] = view.id }
        index(view, insert: true)
        attach(subscriber, key, to: view)
        if first {
            // Commits handed over while no view was open: the latest may not be in the result the load reads.
            for records in feed.handOver.startListening() { commit(records, load: load) }
        }
        view.generation += 1
        load(LoadRequest(view: view.id, generation: view.generation, target: view.target, resume: subscriber.resume))
    }

    func attach(_ subscriber: Subscriber, _ key: SubscriberKey, to view: View) {
        view.subscribers.append(subscriber)
        view.pending.insert(key)
        connections[key.connection, default: (subscriber.connection, [:])].targets[key.serial] = view.id
    }

    func remove(_ key: SubscriberKey) {
        guard let viewID = connections[key.connection]?.targets.removeValue(forKey: key.serial),
              let view = views[viewID] else { return }
        view.subscribers.removeAll { $0.connection.id == key.connection && $0.serial == key.serial }
        view.pending.remove(key)
        if view.subscribers.isEmpty { drop(view) }
    }

    func disconnect(_ connection: Int) {
        guard let entry = connections[connection] else { return }
        for serial in entry.targets.keys { remove(SubscriberKey(connection: connection, serial: serial)) }
        connections[connection] = nil
    }

    func drop(_ view: View) {
        views[view.id] = nil
        if shared[view.key] == view.id { shared[view.key] = nil }
        index(view, insert: false)
        if views.isEmpty { feed.handOver.stopListening() }
    }

    func index(_ view: View, insert: Bool) {
        func update(_ table: inout [String: Set<Int>], _ key: String) {
            if insert {
                table[key, default: []].insert(view.id)
            } else {
                table[key]?.remove(view.id)
                if table[key]?.isEmpty == true { table[key] = nil }
            }
        }
        switch view.target {
        case .document(let path): update(&byDocument, path.description)
        case .query(let query):
            switch query.source {
            case .collection(let c): update(&byCollection, c.description)
            case .collectionGroup(let id, _): update(&byGroup, id)
            }
        }
    }

    func closeAll(_ error: HearthError, closeCode: UInt16) {
        for entry in connections.values { entry.connection.terminate(error, closeCode: closeCode) }
        connections.removeAll()
        views.removeAll()
        shared.removeAll()
        feed.handOver.stopListening()
    }

    // MARK: Changes

    func commit(_ records: [ChangeRecord], load: (LoadRequest) -> Void) {
        guard let last = records.last else { return }
        var touched: [Int: [ChangeRecord]] = [:]
        var order: [Int] = []
        for record in records {
            let path = record.path
            var ids = byDocument[path.description] ?? []
            if let c = byCollection[path.parent.description] { ids.formUnion(c) }
            if let g = byGroup[path.collectionID] { ids.formUnion(g) }
            for id in ids {
                if touched[id] == nil { order.append(id) }
                touched[id, default: []].append(record)
            }
        }
        // Hand-overs kept while no view was open can arrive after later ones already queued.
        if last.sequence > position.sequence { position = LogPosition(sequence: last.sequence, commitTime: last.commitTime) }
        var decoded: [Int64: Document] = [:]
        for id in order {
            guard let view = views[id], let records = touched[id] else { continue }
            switch view.phase {
            case .loading: view.buffer.append(contentsOf: records)
            case .live: apply(records, to: view, decoded: &decoded, load: load)
            }
        }
    }

    /// Applies the records past the view's floor and delivers the changes they make.
    func apply(_ records: [ChangeRecord], to view: View, decoded: inout [Int64: Document], load: (LoadRequest) -> Void) {
        var changes: [DocumentPath: Document?] = [:]
        for record in records where record.sequence > view.floor.sequence && view.target.concerns(record.path) {
            guard let stored = record.document else {
                changes[record.path] = .some(nil)
                continue
            }
            if let doc = decoded[record.sequence] {
                changes[record.path] = doc
            } else if let doc = try? stored.decoded() {
                decoded[record.sequence] = doc
                changes[record.path] = doc
            }
        }
        guard !changes.isEmpty, var model = view.model else { return }
        let before = model.documents
        let step = model.apply(changes)
        view.model = model
        switch step {
        case .changes(let list):
            guard !list.isEmpty else { return }
            broadcast(list, in: view, position: max(view.floor, position),
                      states: SnapshotStates(target: model.target, before: before, after: model.documents))
        case .requery:
            view.phase = .loading
            view.generation += 1
            load(LoadRequest(view: view.id, generation: view.generation, target: model.target, resume: nil))
        }
    }

    /// Reads every view's result again: changes were committed that the feed never saw, so any view may be
    /// stale. Listeners with a result get the difference as an ordinary snapshot once it is read; views still
    /// loading start over, since their read may predate the missed changes.
    func reloadAll(load: (LoadRequest) -> Void) {
        for view in views.values {
            view.phase = .loading
            view.generation += 1
            if let model = view.model {
                load(LoadRequest(view: view.id, generation: view.generation, target: model.target, resume: nil))
            } else {
                load(LoadRequest(view: view.id, generation: view.generation, target: view.target, resume: view.subscribers.first?.resume))
            }
        }
    }

    func loaded(_ id: Int, _ generation: Int, _ result: Result<LoadResult, HearthError>, load: (LoadRequest) -> Void) {
        guard let view = views[id], view.generation == generation, view.phase == .loading else { return }
        let loaded: LoadResult
        switch result {
        case .failure(let error):
            for subscriber in view.subscribers { end(subscriber, error, in: view) }
            return
        case .success(let value): loaded = value
        }
        var model = view.model ?? TargetView(target: loaded.target)
        let before = model.documents
        view.floor = loaded.position
        view.phase = .live
        if let subscriber = view.subscribers.first, subscriber.resume != nil, view.model == nil {
            // A resumed target has a view of its own: the client's view is the result at its token.
            var reset = false
            var changes: [ViewChange]
            if let previous = loaded.previous {
                _ = model.reset(to: previous)
                changes = model.reset(to: loaded.current)
            } else {
                reset = true
                changes = model.reset(to: loaded.current)
            }
            view.model = model
            view.pending.removeAll()
            deliver(ListenSnapshot(targetID: subscriber.targetID, initial: true, reset: reset, changes: changes,
                                   changesJSON: [], position: view.floor, serial: subscriber.serial,
                                   resumedCount: model.documents.count),
                    to: subscriber, in: view)
        } else {
            let changes = model.reset(to: loaded.current)
            view.model = model
            let full = model.diff(from: [], to: model.documents)
            var firstFrames = SharedFrames(ListenSnapshot(targetID: "", initial: true, reset: false, changes: full,
                                                          changesJSON: ViewChange.encode(full), position: view.floor, serial: 0))
            var nextFrames = SharedFrames(ListenSnapshot(targetID: "", initial: false, reset: false, changes: changes,
                                                         changesJSON: ViewChange.encode(changes), position: view.floor, serial: 0,
                                                         states: SnapshotStates(target: model.target, before: before, after: model.documents)))
            for subscriber in view.subscribers {
                let key = SubscriberKey(connection: subscriber.connection.id, serial: subscriber.serial)
                if view.pending.remove(key) != nil {
                    deliver(firstFrames.snapshot(for: subscriber), to: subscriber, in: view)
                } else if !changes.isEmpty {
                    deliver(nextFrames.snapshot(for: subscriber), to: subscriber, in: view, merges: nextFrames.merges)
                }
            }
        }
        let buffered = view.buffer
        view.buffer = []
        if !buffered.isEmpty {
            var decoded: [Int64: Document] = [:]
            apply(buffered, to: view, decoded: &decoded, load: load)
        }
    }

    // MARK: Delivery

    func broadcast(_ changes: [ViewChange], in view: View, position: LogPosition, states: SnapshotStates) {
        var frames = SharedFrames(ListenSnapshot(targetID: "", initial: false, reset: false, changes: changes,
                                                 changesJSON: ViewChange.encode(changes), position: position, serial: 0,
                                                 states: states))
        let anyPending = !view.pending.isEmpty
        for subscriber in view.subscribers {
            if anyPending && view.pending.contains(SubscriberKey(connection: subscriber.connection.id, serial: subscriber.serial)) {
                continue
            }
            deliver(frames.snapshot(for: subscriber), to: subscriber, in: view, merges: frames.merges)
        }
    }

    /// One snapshot for every listener of a view: its frame is encoded once per target id the listeners
    /// chose (most clients name a query's target alike), not once per listener.
    struct SharedFrames {
        let template: ListenSnapshot
        var frames: [String: [UInt8]] = [:]
        let merges = MergeCache()

        init(_ template: ListenSnapshot) {
            var template = template
            template.encodings = SharedEncodings()
            self.template = template
        }

        /// The last target id served and its frame: listeners of a view mostly name it alike.
        var last: (targetID: String, frame: [UInt8])?

        mutating func snapshot(for subscriber: Subscriber) -> ListenSnapshot {
            var snapshot = template
            snapshot.targetID = subscriber.targetID
            snapshot.serial = subscriber.serial
            if let last, last.targetID == subscriber.targetID {
                snapshot.frame = last.frame
            } else if let frame = frames[subscriber.targetID] {
                last = (subscriber.targetID, frame)
                snapshot.frame = frame
            } else if frames.count < 64 {
                let frame = snapshot.encodedFrame()
                frames[subscriber.targetID] = frame
                last = (subscriber.targetID, frame)
                snapshot.frame = frame
            }
            return snapshot
        }
    }

    /// Merges of one new snapshot into the ones still waiting in its listeners' queues: the listeners of a
    /// view that fell behind wait mostly on the same few snapshots, so each merge is computed once.
    final class MergeCache {
        struct Key: Hashable {
            /// Held, so that its identity stays unique while the cache lives.
            let earlier: SnapshotStates
            let targetID: String

            static func == (a: Key, b: Key) -> Bool { a.earlier === b.earlier && a.targetID == b.targetID }

            func hash(into hasher: inout Hasher) {
                hasher.combine(ObjectIdentifier(earlier))
                hasher.combine(targetID)
            }
        }
        var merged: [Key: ListenSnapshot] = [:]

        /// The changes from the earlier snapshot's starting view to the later one's result, as one snapshot
        /// (Firestore's `docChanges` of the two states: removals first, each document once); nil when either
        /// is a first or reset snapshot.
        func merge(_ earlier: ListenSnapshot, _ later: ListenSnapshot) -> ListenSnapshot? {
            guard let from = earlier.states, let to = later.states, !earlier.initial, !earlier.reset,
                  !later.initial, !later.reset, later.position.sequence >= earlier.position.sequence else { return nil }
            let key = Key(earlier: from, targetID: later.targetID)
            var snapshot: ListenSnapshot
            if let cached = merged[key] {
                snapshot = cached
            } else {
                let changes = TargetView(target: to.target).diff(from: from.before, to: to.after)
                snapshot = ListenSnapshot(targetID: later.targetID, initial: false, reset: false, changes: changes,
                                          changesJSON: ViewChange.encode(changes), position: later.position, serial: 0,
                                          states: SnapshotStates(target: to.target, before: from.before, after: to.after))
                snapshot.frame = snapshot.encodedFrame()
                snapshot.encodings = SharedEncodings()
                if merged.count < 64 { merged[key] = snapshot }
            }
            snapshot.serial = later.serial
            return snapshot
        }
    }

    /// Queues a snapshot after the per-change read check of document targets; a denial or a full queue ends
    /// the target or the connection.
    func deliver(_ snapshot: ListenSnapshot, to subscriber: Subscriber, in view: View, merges: MergeCache? = nil) {
        var snapshot = snapshot
        if snapshot.changesJSON.isEmpty { snapshot.changesJSON = ViewChange.encode(snapshot.changes) }
        if case .document(let path) = view.target, !subscriber.identity.isAdmin {
            let doc = view.model?.documents.first
            do {
                try feed.authorizer.authorizeRead(subscriber.identity, path, doc)
            } catch {
                end(subscriber, error as? HearthError ?? .permissionDenied(), in: view)
                return
            }
        }
        let queued = if let merges, snapshot.states != nil {
            subscriber.connection.queue.push(snapshot) { earlier in merges.merge(earlier, snapshot) }
        } else {
            subscriber.connection.queue.push(.snapshot(snapshot))
        }
        if !queued {
            let connection = subscriber.connection
            connection.terminate(.resourceExhausted(
                "the client is not reading its updates fast enough; reconnect and resume with the last resumeToken"),
                closeCode: 1013)
            disconnect(connection.id)
        }
    }

    /// Ends one target with an error frame.
    func end(_ subscriber: Subscriber, _ error: HearthError, in view: View) {
        subscriber.connection.targetEnded(subscriber.targetID, serial: subscriber.serial, error: error)
        remove(SubscriberKey(connection: subscriber.connection.id, serial: subscriber.serial))
    }
}
