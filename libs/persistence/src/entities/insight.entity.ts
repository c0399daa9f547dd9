import { Column, Entity, Index } from 'typeorm';
import { ProjectItemColumns } from './project-item.entity';

/** An insight about the project, retrievable by its embedding (of `name` + `description`). */
@Entity({ name: 'insights' })
@Index('insights_project_external_id_key', ['projectId', 'externalId'], { unique: true })
export class InsightEntity extends ProjectItemColumns {
  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text' })
  description: string;
}
