import { InterludeError, errorFromFetch } from '@interlude/protocol'
import { useEffect, useState } from 'react'
import type { ForkAt, ForkChild, HistoryClient } from './history-client.ts'

/** Ancestors read at most (a fork of a fork of …): the tree stays a bounded number of requests. */
const MAX_ANCESTORS = 8

export interface BranchTreeProps {
  readonly client: HistoryClient
  /** The opened thread. */
  readonly threadId: string
  /** Titles known from the thread list, by thread id. */
  readonly titles: ReadonlyMap<string, string>
  /** Replays another thread of the tree. */
  readonly onOpen: (threadId: string) => void
  /** Read again when this changes (after a fork). */
  readonly refreshKey?: number
}

interface Node {
  readonly threadId: string
  /** Where it starts in its parent. */
  readonly at: ForkAt | undefined
  readonly children: readonly Node[]
}

interface Tree {
  readonly root: Node
  /** More ancestors than were read. */
  readonly cut: boolean
}

/**
 * The opened thread's branches: its origin chain up to the first thread (`ThreadSnapshot.parent`), its parent's forks
 * (its siblings) and its own forks (`GET …/threads/:threadId/forks`). Every other thread of the tree opens for replay.
 */
export function BranchTree({ client, threadId, titles, onOpen, refreshKey = 0 }: BranchTreeProps) {
  const [tree, setTree] = useState<Tree | undefined>()
  const [error, setError] = useState<string | undefined>()

  useEffect(() => {
    const controller = new AbortController()
    const { signal } = controller
    setError(undefined)
    loadTree(client, threadId, signal)
      .then((loaded) => {
        if (!signal.aborted) setTree(loaded)
      })
      .catch((reason: unknown) => {
        if (signal.aborted) return
        const failure = InterludeError.isInstance(reason) ? reason : errorFromFetch(reason)
        setTree(undefined)
        setError(`${failure.code}: ${failure.message}`)
      })
    return () => controller.abort()
  }, [client, threadId, refreshKey])

  return (
    <section className="branch-tree" aria-label="Branches">
      <h3>Branches</h3>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {tree === undefined && error === undefined && <p className="muted">Reading the branches…</p>}
      {tree && (
        <>
          {tree.cut && <p className="muted">Older ancestors are not shown.</p>}
          <ul className="tree">
            <TreeNode node={tree.root} current={threadId} titles={titles} onOpen={onOpen} />
          </ul>
          {tree.root.threadId === threadId && tree.root.children.length === 0 && (
            <p className="muted">This thread has no forks yet.</p>
          )}
        </>
      )}
    </section>
  )
}

function TreeNode({
  node,
  current,
  titles,
  onOpen,
}: {
  readonly node: Node
  readonly current: string
  readonly titles: ReadonlyMap<string, string>
  readonly onOpen: (threadId: string) => void
}) {
  const title = titles.get(node.threadId)
  const name = (
    <>
      {title ?? 'thread'} <code>{node.threadId.slice(0, 16)}</code>
    </>
  )
  return (
    <li data-thread-id={node.threadId}>
      {node.at && <span className="muted branch-at">{atLabel(node.at)} → </span>}
      {node.threadId === current ? (
        <strong aria-current="true">{name} · this thread</strong>
      ) : (
        <button type="button" className="link" onClick={() => onOpen(node.threadId)}>
          {name}
        </button>
      )}
      {node.children.length > 0 && (
        <ul>
          {node.children.map((child) => (
            <TreeNode key={child.threadId} node={child} current={current} titles={titles} onOpen={onOpen} />
          ))}
        </ul>
      )}
    </li>
  )
}

export function atLabel(at: ForkAt): string {
  return 'messageId' in at ? `after message ${at.messageId.slice(0, 12)}` : `at batch ${at.batchId.slice(0, 12)}`
}

async function loadTree(client: HistoryClient, threadId: string, signal: AbortSignal): Promise<Tree> {
  // The chain up: [opened, parent, grandparent, …], each with where it starts in the next.
  const chain: { threadId: string; at: ForkAt | undefined }[] = [{ threadId, at: undefined }]
  let cut = false
  for (;;) {
    const link = chain[chain.length - 1]!
    const origin = await client.origin(link.threadId, signal)
    if (origin === undefined) break
    if (chain.length > MAX_ANCESTORS || chain.some((c) => c.threadId === origin.threadId)) {
      cut = true
      break
    }
    chain[chain.length - 1] = { threadId: link.threadId, at: origin.at }
    chain.push({ threadId: origin.threadId, at: undefined })
  }
  const own = await client.forks(threadId, signal)
  const opened: Node = { threadId, at: chain[0]!.at, children: own.map(leaf) }
  if (chain.length === 1) return { root: opened, cut }
  // The parent shows all its forks, the opened one with its own children.
  const siblings = await client.forks(chain[1]!.threadId, signal)
  const children = siblings.map((child) => (child.threadId === threadId ? opened : leaf(child)))
  if (!children.some((child) => child.threadId === threadId)) children.push(opened)
  let node: Node = { threadId: chain[1]!.threadId, at: chain[1]!.at, children }
  for (let i = 2; i < chain.length; i++) node = { threadId: chain[i]!.threadId, at: chain[i]!.at, children: [node] }
  return { root: node, cut }
}

function leaf(child: ForkChild): Node {
  return { threadId: child.threadId, at: child.at, children: [] }
}
