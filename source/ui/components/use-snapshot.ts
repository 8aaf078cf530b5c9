import { useLayoutEffect, useState } from 'react';
import type { UiSnapshot, UiStore } from '../store/create-store.js';

/**
 * The store's latest snapshot. Subscribes in a layout effect (synchronously at mount, unlike
 * useSyncExternalStore's passive effect), so a flush right after `render()` already redraws.
 */
export function useSnapshot(store: UiStore): UiSnapshot {
  const [snapshot, setSnapshot] = useState(store.getSnapshot);
  useLayoutEffect(() => {
    const update = () => setSnapshot(store.getSnapshot());
    const unsubscribe = store.subscribe(update);
    update(); // a flush between the first render and this effect
    return unsubscribe;
  }, [store]);
  return snapshot;
}
