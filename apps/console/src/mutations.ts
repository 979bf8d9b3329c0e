import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useToast } from './ui';

/**
 * Deleting one named item from a list: on success a toast names it (`<label> <name> deleted`) and the queries under
 * `invalidate` refetch; a refusal's detail is shown as an error toast.
 */
export function useDelete<T extends { name: string }>(
  label: string,
  remove: (item: T) => Promise<unknown>,
  invalidate: readonly unknown[],
) {
  const toast = useToast();
  const client = useQueryClient();
  return useMutation({
    mutationFn: remove,
    onSuccess: (_x, item) => {
      toast(`${label} ${item.name} deleted`);
      void client.invalidateQueries({ queryKey: invalidate });
    },
    onError: (err) => toast(err.message, 'error'),
  });
}

/**
 * Saving an edit form: creates when `editing` is false, saves otherwise; on success a toast names the item
 * (`<label> <name> created|saved`), the queries under `invalidate` refetch and the form closes (`onDone`). The error
 * stays on the mutation for the form to show.
 */
export function useSave<T extends { name: string }>(
  label: string,
  editing: boolean,
  save: () => Promise<T>,
  invalidate: readonly unknown[],
  onDone: () => void,
) {
  const toast = useToast();
  const client = useQueryClient();
  return useMutation({
    mutationFn: save,
    onSuccess: (item) => {
      toast(`${label} ${item.name} ${editing ? 'saved' : 'created'}`);
      void client.invalidateQueries({ queryKey: invalidate });
      onDone();
    },
  });
}

/** A form's draft, and `text(key)`: the value and onChange of the input bound to that field. */
export function useDraft<D extends object>(initial: D) {
  const [draft, setDraft] = useState<D>(initial);
  const text = (k: keyof D) => ({
    value: String(draft[k]),
    onChange: (e: { target: { value: string } }) => setDraft({ ...draft, [k]: e.target.value }),
  });
  return { draft, setDraft, text };
}
